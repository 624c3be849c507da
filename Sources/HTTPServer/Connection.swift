import HTTP

/// One client connection, as the event loop holds it: the socket, the bytes read and not
/// yet parsed, the response being written, and the state machine that decides what
/// happens next. Lives on its loop's thread only.
final class Connection {
    /// What the access log needs of the request being answered.
    struct InFlight {
        var method: String
        var target: String
        var start: UInt64
        var status = 0
        var bytes: Int64 = 0
        var note: String?
    }

    let id: UInt64
    let fd: Int32
    /// Set when the connection closes, for whoever is still working for it.
    let gone = ClientGone()
    var machine: ConnectionStateMachine
    var parser: RequestParser
    var input: [UInt8] = []
    var inputStart = 0
    var output = ResponseOutput()
    /// The request just parsed, until the handler has routed it.
    var request: HTTPRequestHead?
    /// The work the handler gave, until it is submitted to the pool.
    var job: Job?

    /// A routed request waiting to be handed over.
    enum Job {
        case work(WorkerPool.Job)
        case deferred(@Sendable (any Responder) -> Void)
    }
    /// The answer the machine will ask to write (from the handler or a worker).
    var response: HTTPResponse?
    /// The loop is inside `parse` for this connection.
    var parsing = false
    /// In the loop's table; false once closed.
    var isOpen = true
    /// What the parser reported, until it is written.
    var parseError: HTTPError?
    var inFlight: InFlight?
    /// In the loop's epoll set: not until it first waits for something.
    var watched = false
    /// The epoll events asked for now.
    var interest: ConnectionStateMachine.Interest = []
    /// The time of this connection's own entry in the loop's timer queue, if it has one.
    var scheduled: UInt64?

    init(id: UInt64, fd: Int32, limits: ParserLimits, machine: ConnectionStateMachine) {
        self.id = id
        self.fd = fd
        self.machine = machine
        parser = RequestParser(limits: limits)
    }

    var unparsed: Int { input.count - inputStart }

    /// Drops consumed input once it is the larger part of the buffer.
    func compactInput() {
        if inputStart == input.count {
            input.removeAll(keepingCapacity: true)
            inputStart = 0
        } else if inputStart > 4096, inputStart * 2 > input.count {
            input.removeFirst(inputStart)
            inputStart = 0
        }
    }
}
