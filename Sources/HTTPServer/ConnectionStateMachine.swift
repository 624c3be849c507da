import HTTP

/// The life of one connection as a value: the loop tells it what happened (an event) and
/// performs what it answers (an action). It does no I/O and reads no clock: times come in
/// with the events, so every path can be tested without a socket, event by event.
///
/// What the loop reads back after each event: `interest` (the epoll events to watch) and
/// `deadline` (when `timerFired` must be called next).
struct ConnectionStateMachine: Sendable {
    /// The limits a connection is held to, in nanoseconds.
    struct Timeouts: Sendable, Equatable {
        /// From the first byte of a request (or the accept) to the end of its head: 408 after.
        var header: UInt64
        /// A kept-alive connection with nothing in flight is closed after it.
        var idle: UInt64
        /// The longest a client may go without reading any of a response.
        var write: UInt64
        /// After an answer that closes, how long what the client still sends is read and
        /// dropped, so the kernel does not reset the connection over the unread bytes.
        var linger: UInt64
        /// `server.minSendBytesPerSecond`: an answer read slower than this, over its write
        /// so far and once `sendGrace` has passed, is cut (0: no floor).
        var minSendBytesPerSecond = 0
        var sendGrace: UInt64 = 0
    }

    enum State: Sendable, Equatable {
        /// Waiting for the first byte of a request.
        case idle
        /// Part of a request head has arrived.
        case readingHead
        /// A request was parsed and is with the handler.
        case routing(Request)
        /// A worker is making the answer.
        case processing(Request)
        /// A response is being written; `then` says what follows it.
        case writing(then: AfterWrite)
        /// Writing is shut down; what arrives is dropped until the peer closes or time is up.
        case lingering
        case closed
    }

    /// What the answer to a parsed request needs to know of it.
    struct Request: Sendable, Equatable {
        var keepAlive: Bool
        var isHead: Bool
    }

    enum AfterWrite: Sendable, Equatable {
        /// Read the next request.
        case keepAlive
        /// Close: the client asked to, and sent nothing more.
        case close
        /// Half-close and linger: the client may still be sending.
        case linger
    }

    enum Action: Sendable, Equatable {
        case none
        /// Run the parser over the bytes held, and report what it found.
        case parse
        /// Drop the bytes read.
        case discardInput
        /// Ask the handler about the request just parsed, and report its route.
        case route
        /// Give the routed job to the worker pool; report `submitRefused` if it is full.
        case submit
        /// Write the response at hand (the handler's or a worker's).
        case write(keepAlive: Bool, isHead: Bool)
        /// Write this error, with `Connection: close` unless `keepAlive`.
        case writeError(Refusal, keepAlive: Bool)
        /// Shut down the writing side and go on reading (lingering close).
        case shutdownWrite
        case close
    }

    /// The answers the server gives on its own. A plain enum, so an action is a trivial
    /// value: copying one costs nothing on the hit path. The loop turns each into its
    /// `HTTPError` (the parser's own error, or one of `HTTPError`'s named ones).
    enum Refusal: Sendable, Equatable {
        /// The error the parser reported.
        case unparsable
        case requestTimeout
        case tooManyConnections
        case queueFull
        case shuttingDown
    }

    /// The epoll events wanted.
    struct Interest: OptionSet, Sendable {
        let rawValue: UInt8
        static let read = Interest(rawValue: 1)
        static let write = Interest(rawValue: 2)
        /// Only the peer's hang-up (while a worker has the request).
        static let hangUp = Interest(rawValue: 4)
    }

    private(set) var state = State.idle
    /// When `timerFired` must be called; nil when nothing is timed.
    private(set) var deadline: UInt64?
    /// Whether the output is waiting for the socket to take more.
    private var blockedOnWrite = false
    private var draining = false
    private let timeouts: Timeouts
    /// Since when the connection has been in its state (shedding takes the oldest first).
    private(set) var since: UInt64
    /// Bytes of the request head read so far, or of the answer sent so far.
    private(set) var progress: Int64 = 0
    /// When the answer being written started, and when the write timeout ends.
    private var writeStarted: UInt64 = 0
    private var writeDeadline: UInt64?
    /// The send rate is judged over spans: bytes handed to the kernel since the last
    /// check (a client that reads nothing leaves the kernel's buffer full, so none).
    private var checkpoint: (at: UInt64, bytes: Int64) = (0, 0)
    private var lastWriteAt: UInt64 = 0
    /// Set when the send-rate floor cut the connection (the loop counts it).
    private(set) var cutForRate = false

    /// How often a blocked answer's rate is checked against the floor.
    static let rateWindow: UInt64 = 1_000_000_000

    /// A new connection: its request head is due within the header timeout from now.
    init(now: UInt64, timeouts: Timeouts) {
        self.timeouts = timeouts
        deadline = now + timeouts.header
        since = now
    }

    /// Whether requests are read and parsed now.
    var wantsRequest: Bool {
        switch state {
        case .idle, .readingHead: true
        default: false
        }
    }

    var interest: Interest {
        switch state {
        case .idle, .readingHead, .lingering: .read
        case .routing, .processing: .hangUp
        case .writing: blockedOnWrite ? [.write, .hangUp] : .hangUp
        case .closed: []
        }
    }

    // MARK: Events

    /// The server is over its connection limit: this one is answered 503 and closed.
    mutating func refused() -> Action {
        state = .writing(then: .linger)
        deadline = nil
        return .writeError(.tooManyConnections, keepAlive: false)
    }

    /// `count` bytes arrived: an idle connection starts its header timeout.
    mutating func bytesRead(now: UInt64, count: Int = 0) -> Action {
        switch state {
        case .idle:
            state = .readingHead
            deadline = now + timeouts.header
            (since, progress) = (now, Int64(count))
            return .parse
        case .readingHead:
            progress += Int64(count)
            return .parse
        case .lingering: return .discardInput
        case .routing, .processing, .writing, .closed:
            // Pipelined requests wait in the buffer until the answer is written.
            return .none
        }
    }

    /// The parser needs more bytes; `idle` when it holds nothing of a request yet (only
    /// the empty lines allowed before one), so a keep-alive connection stays idle.
    mutating func needMore(parserIdle: Bool, now: UInt64) -> Action {
        if case .readingHead = state, parserIdle {
            state = .idle
            deadline = now + timeouts.idle
            since = now
        }
        return .none
    }

    /// A whole request head.
    mutating func requestParsed(keepAlive: Bool, isHead: Bool) -> Action {
        switch state {
        case .idle, .readingHead:
            state = .routing(Request(keepAlive: keepAlive && !draining, isHead: isHead))
            deadline = nil
            return .route
        default:
            return .none
        }
    }

    /// The bytes cannot be a request: the parser's error is the answer, and the
    /// connection closes.
    mutating func parseFailed() -> Action {
        switch state {
        case .idle, .readingHead, .routing:
            state = .writing(then: .linger)
            deadline = nil
            return .writeError(.unparsable, keepAlive: false)
        default:
            return .none
        }
    }

    /// The handler answered at once.
    mutating func respondedNow(now: UInt64 = 0) -> Action {
        guard case .routing(let r) = state else { return .none }
        return startWriting(r, now: now)
    }

    /// The handler gave work for the pool.
    mutating func routedToWork() -> Action {
        guard case .routing(let r) = state else { return .none }
        state = .processing(r)
        return .submit
    }

    /// The pool's queue is full.
    mutating func submitRefused() -> Action {
        guard case .processing(let r) = state else { return .none }
        let keep = r.keepAlive && !draining
        state = .writing(then: keep ? .keepAlive : .linger)
        return .writeError(.queueFull, keepAlive: keep)
    }

    /// A worker finished the answer.
    mutating func responseReady(now: UInt64 = 0) -> Action {
        guard case .processing(let r) = state else { return .none }
        return startWriting(r, now: now)
    }

    /// The socket took `bytes`; `done` when the whole response has gone. `inputPending`:
    /// bytes the client sent are still unread, so a close must linger.
    mutating func wrote(done: Bool, bytes: Int = 0, inputPending: Bool = false, now: UInt64) -> Action {
        guard case .writing(let then) = state else { return .none }
        progress += Int64(bytes)
        if bytes > 0 { lastWriteAt = now }
        guard done else {
            blockedOnWrite = true
            let until = now + timeouts.write
            writeDeadline = until
            deadline = timeouts.minSendBytesPerSecond > 0 ? min(until, nextRateCheck(now)) : until
            return .none
        }
        blockedOnWrite = false
        writeDeadline = nil
        since = now
        var next = then
        if draining, next == .keepAlive { next = .linger }
        if next == .close, inputPending { next = .linger }
        switch next {
        case .keepAlive:
            state = .idle
            deadline = now + timeouts.idle
            // Requests pipelined behind this one are in the buffer already.
            return .parse
        case .close:
            state = .closed
            deadline = nil
            return .close
        case .linger:
            state = .lingering
            deadline = now + timeouts.linger
            return .shutdownWrite
        }
    }

    /// The peer closed its side, or the connection failed.
    mutating func peerClosed() -> Action {
        guard state != .closed else { return .none }
        state = .closed
        deadline = nil
        return .close
    }

    /// The deadline may have passed.
    mutating func timerFired(now: UInt64) -> Action {
        guard let d = deadline, now >= d else { return .none }
        if case .writing = state, blockedOnWrite, let until = writeDeadline {
            if timeouts.minSendBytesPerSecond > 0, now - writeStarted >= timeouts.sendGrace,
                now - checkpoint.at >= judgedSpan
            {
                // Judged over spans as long as the grace (a second at least), so a client
                // that pauses a moment is not cut: read slower than the floor over one, cut
                // (never an answer cut and then reused).
                let span = Double(now - checkpoint.at) / 1e9
                let rate = Double(progress - checkpoint.bytes) / span
                checkpoint = (now, progress)
                if rate < Double(timeouts.minSendBytesPerSecond) {
                    state = .closed
                    deadline = nil
                    cutForRate = true
                    return .close
                }
            }
            guard now >= until else {
                deadline = min(until, nextRateCheck(now))
                return .none
            }
        }
        switch state {
        case .readingHead:
            state = .writing(then: .linger)
            deadline = nil
            return .writeError(.requestTimeout, keepAlive: false)
        case .idle, .writing, .lingering:
            state = .closed
            deadline = nil
            return .close
        case .routing, .processing, .closed:
            deadline = nil
            return .none
        }
    }

    /// Shutdown began: an idle connection closes now, any other after its answer.
    mutating func drainStarted() -> Action {
        draining = true
        switch state {
        case .idle:
            state = .closed
            deadline = nil
            return .close
        default:
            // The answer in flight goes with `Connection: close` (see `startWriting`).
            return .none
        }
    }

    /// The drain deadline passed: a request still waiting for its answer gets a 503 that
    /// closes; anything else closes now.
    mutating func drainDeadlinePassed() -> Action {
        draining = true
        switch state {
        case .processing, .routing, .readingHead:
            state = .writing(then: .close)
            deadline = nil
            return .writeError(.shuttingDown, keepAlive: false)
        case .writing:
            // An answer already going out is let finish (the loop bounds the wait), then closes.
            state = .writing(then: .close)
            return .none
        case .idle, .lingering:
            state = .closed
            deadline = nil
            return .close
        case .closed:
            return .none
        }
    }

    private mutating func startWriting(_ r: Request, now: UInt64) -> Action {
        let keep = r.keepAlive && !draining
        state = .writing(then: keep ? .keepAlive : .close)
        deadline = nil
        blockedOnWrite = false
        (since, writeStarted, progress, lastWriteAt) = (now, now, 0, now)
        checkpoint = (now, 0)
        return .write(keepAlive: keep, isHead: r.isHead)
    }

    // MARK: The send-rate floor and shedding

    /// The answer's rate so far, in bytes a second.
    func rate(_ now: UInt64) -> Double {
        let elapsed = Double(now > since ? now - since : 0) / 1e9
        return elapsed > 0 ? Double(progress) / elapsed : .infinity
    }

    /// An answer being drained below the floor: nothing handed to the kernel for a
    /// second (its buffer is full: the client reads nothing), or less than the floor a
    /// second over the span since the last check.
    private func isBelowFloor(_ now: UInt64) -> Bool {
        guard timeouts.minSendBytesPerSecond > 0 else { return false }
        return isStalled(now) || (spanRate(now).map { $0 < Double(timeouts.minSendBytesPerSecond) } ?? false)
    }

    /// Nothing handed to the kernel for a second.
    private func isStalled(_ now: UInt64) -> Bool { now - lastWriteAt >= Self.rateWindow }

    /// Bytes a second handed to the kernel since the last check, once that is a second ago.
    private func spanRate(_ now: UInt64) -> Double? {
        let span = Double(now - checkpoint.at) / 1e9
        return span >= 1 ? Double(progress - checkpoint.bytes) / span : nil
    }

    /// How long a span the send rate is judged over: the grace, a second at least.
    private var judgedSpan: UInt64 { max(timeouts.sendGrace, Self.rateWindow) }

    private func nextRateCheck(_ now: UInt64) -> UInt64 {
        max(writeStarted + timeouts.sendGrace, now + Self.rateWindow)
    }

    /// Whether this connection may be given up for a newcomer, and as what: kept alive
    /// with nothing in flight, lingering after its answer, reading its head, or draining
    /// its answer below the floor. Nil while a request is routed or rendered, or an answer
    /// goes out at a healthy rate.
    func shedCandidate(now: UInt64) -> (reason: Shedding.Reason, rate: Double)? {
        switch state {
        case .idle: return (.idle, 0)
        case .lingering: return (.answered, 0)
        case .readingHead: return (.slowHead, rate(now))
        case .writing where blockedOnWrite && isBelowFloor(now):
            return (.slowRead, isStalled(now) ? 0 : spanRate(now) ?? 0)
        default: return nil
        }
    }

    /// Given up for a newcomer: one reading its head is told 408, anything else closes
    /// (an answer mid-way is cut, the connection never reused).
    mutating func shed() -> Action {
        if case .readingHead = state {
            state = .writing(then: .close)
            deadline = nil
            return .writeError(.requestTimeout, keepAlive: false)
        }
        state = .closed
        deadline = nil
        return .close
    }
}
