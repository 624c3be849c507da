import HTTP

/// One client connection. Lives on the event loop thread only.
final class Connection {
    enum Phase {
        /// Reading (and parsing) a request.
        case reading
        /// A worker is making the response; nothing more is read meanwhile.
        case processing
        /// The response is being written.
        case writing
    }

    enum Deadline {
        case none
        /// The request head must be complete by then (408).
        case header(UInt64)
        /// A kept-alive connection with no request yet is closed then.
        case idle(UInt64)
        /// The client must have read more of the response by then.
        case write(UInt64)
    }

    /// What is left of a response's body to write.
    enum Body {
        case bytes([UInt8], sent: Int)
        case file(OpenFile, offset: Int64, remaining: Int64)
    }

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
    var phase = Phase.reading
    var parser: RequestParser
    var input: [UInt8] = []
    var inputStart = 0
    /// The response head being written. The buffer is kept from response to response.
    var head: [UInt8] = []
    var headSent = 0
    /// The body after the head, if any is left.
    var body: Body?
    var deadline = Deadline.none
    var closeAfterWrite = false
    /// The request being processed was a HEAD: its response goes without a body.
    var pendingHead = false
    var inFlight: InFlight?
    /// The epoll events asked for now.
    var interest: UInt32 = 0

    init(id: UInt64, fd: Int32, limits: ParserLimits) {
        self.id = id
        self.fd = fd
        parser = RequestParser(limits: limits)
    }

    var unparsed: Int { input.count - inputStart }

    var hasOutput: Bool { headSent < head.count || body != nil }

    /// Forgets the response being written (its file reference goes with it).
    func dropOutput() {
        head.removeAll(keepingCapacity: true)
        headSent = 0
        body = nil
    }

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
