internal import CLinux
import Glibc
import HTTP
import Synchronization
import Syscalls

/// One event loop: a thread that owns its epoll instance, the connections it accepts from
/// the server's listening socket (shared with EPOLLEXCLUSIVE: one loop is woken per new
/// connection), and one timer queue for their deadlines. It only performs I/O: what to do
/// with a connection is decided by its `ConnectionStateMachine`, fed the events seen here.
/// Handlers' CPU-bound work goes to the server's shared `WorkerPool`, whose results come
/// back to the loop that asked through its eventfd.
///
/// `@unchecked Sendable`: the connection table, timers and buffers are touched only by the
/// thread in `run()`. What other threads touch is `completions` (a Mutex), the stats
/// (atomics), `shutdownRequested` (an atomic) and the eventfds (written with write(2)).
final class EventLoop: @unchecked Sendable {
    typealias Action = ConnectionStateMachine.Action

    let index: Int
    let configuration: ServerConfiguration
    let stats: ServerStats
    private let handler: any HTTPHandler
    let epoll: Int32
    let listenFD: Int32
    private let wakeFD: Int32
    /// The signal eventfd, registered with loop 0 only.
    private let signalFD: Int32?
    private let completions: Completions
    private let shutdownRequested: Atomic<Bool>
    private unowned let server: HTTPServer
    var connections: [UInt64: Connection] = [:]
    var nextID: UInt64 = 16
    var draining = false
    private var drainDeadline: UInt64 = 0
    /// Set once the drain deadline has passed: the last answers have until then.
    private var finalDeadline: UInt64?
    private var timers = TimerQueue()
    var accept = AcceptBackoff()
    private var log: AccessLog
    private var dateSecond = -1
    private var dateText = ""
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// The monotonic clock, read once per loop turn.
    var now: UInt64 = 0
    let timeouts: ConnectionStateMachine.Timeouts

    static let listenID: UInt64 = 0
    private static let wakeID: UInt64 = 1
    private static let signalID: UInt64 = 2
    /// The most read from one connection before what was read is parsed: a client that
    /// pipelines without end is read in turns with the others, not into memory at once.
    private static let readBudget = 256 * 1024
    /// How long the last answers (503s at the drain deadline) have to be written.
    private static let finalGrace: UInt64 = 1_000_000_000

    init(index: Int, server: HTTPServer, sink: LoopSink, listenFD: Int32, signalFD: Int32?) throws(SystemError) {
        self.index = index
        self.server = server
        configuration = server.configuration
        stats = server.stats
        handler = server.handler
        shutdownRequested = Atomic(false)
        log = AccessLog(format: configuration.logFormat, enabled: configuration.accessLog)
        let ms: (Int) -> UInt64 = { UInt64(max(0, $0)) * 1_000_000 }
        timeouts = ConnectionStateMachine.Timeouts(
            header: ms(configuration.headerTimeoutMs), idle: ms(configuration.idleTimeoutMs),
            write: ms(configuration.writeTimeoutMs), linger: ms(configuration.lingerTimeoutMs),
            minSendBytesPerSecond: configuration.minSendBytesPerSecond, sendGrace: ms(configuration.sendGraceMs))
        self.listenFD = listenFD
        self.signalFD = signalFD
        epoll = try Syscall.retrying("epoll_create1") { clinux_epoll_create() }
        wakeFD = sink.wakeFD
        completions = sink.completions
        let events = UInt32(CLINUX_EPOLLIN)
        try watchListener()
        try Syscall.retrying("epoll_ctl") { clinux_epoll_ctl(epoll, 1, wakeFD, events, EventLoop.wakeID) }
        if let signalFD {
            try Syscall.retrying("epoll_ctl") { clinux_epoll_ctl(epoll, 1, signalFD, events, EventLoop.signalID) }
        }
    }

    deinit { Glibc.close(epoll) }

    /// Asks the loop to drain, from any thread.
    func requestShutdown() {
        shutdownRequested.store(true, ordering: .releasing)
        EventLoop.poke(wakeFD)
    }

    /// Serves until a shutdown has drained (or its drain timeout passed).
    func run() {
        var events = [clinux_event](repeating: clinux_event(), count: 256)
        now = Clock.now()
        while true {
            let timeout = waitTimeout()
            let n = events.withUnsafeMutableBufferPointer { clinux_epoll_wait(epoll, $0.baseAddress, 256, timeout) }
            now = Clock.now()
            for i in 0..<max(0, Int(n)) {
                let e = events[i]
                switch e.data {
                case EventLoop.listenID: acceptAll()
                case EventLoop.wakeID:
                    drainEventFD(wakeFD)
                    deliverCompletions()
                case EventLoop.signalID:
                    if let signalFD { drainEventFD(signalFD) }
                    server.shutdown()
                default: connectionEvent(e.data, e.events)
                }
            }
            if shutdownRequested.load(ordering: .acquiring), !draining { beginDrain() }
            fireTimers()
            resumeAcceptingIfDue()
            if draining, finalDeadline == nil, now >= drainDeadline { drainDeadlinePassed() }
            log.flush()
            if draining, connections.isEmpty { break }
            if let f = finalDeadline, now >= f { break }
        }
        for c in Array(connections.values) { close(c) }
        log.flush()
    }

    /// Milliseconds until the next thing that is timed, rounded up; -1 when nothing is.
    private func waitTimeout() -> Int32 {
        var next = timers.earliest
        func consider(_ t: UInt64?) {
            if let t, next.map({ t < $0 }) ?? true { next = t }
        }
        consider(accept.resumeAt)
        if draining { consider(finalDeadline ?? drainDeadline) }
        guard let next else { return -1 }
        let wait = next > now ? next - now : 0
        return Int32(min(60_000, (wait + 999_999) / 1_000_000))
    }

    // MARK: Connection events

    private func connectionEvent(_ id: UInt64, _ events: UInt32) {
        guard let c = connections[id] else { return }
        if events & UInt32(CLINUX_EPOLLERR) != 0 {
            perform(c.machine.peerClosed(), c)
            return
        }
        if events & UInt32(CLINUX_EPOLLOUT) != 0, case .writing = c.machine.state {
            flush(c)
        }
        if events & (UInt32(CLINUX_EPOLLIN) | UInt32(CLINUX_EPOLLHUP) | UInt32(CLINUX_EPOLLRDHUP)) != 0,
            c.machine.state != .closed
        {
            readAvailable(c)
        }
        sync(c)
    }

    func readAvailable(_ c: Connection) {
        var total = 0
        while total < Self.readBudget {
            let n: Int?
            do {
                n = try Syscall.nonBlocking("read") {
                    readBuffer.withUnsafeMutableBytes { read(c.fd, $0.baseAddress, $0.count) }
                }
            } catch {
                perform(c.machine.peerClosed(), c)
                return
            }
            guard let n else { break }
            if n == 0 {
                // The peer closed (or half-closed) its side: nothing more will come.
                perform(c.machine.peerClosed(), c)
                return
            }
            total += n
            if c.machine.state == .lingering {
                continue
            }
            c.input.append(contentsOf: readBuffer[0..<n])
            if n < readBuffer.count { break }
        }
        if total > 0 { perform(c.machine.bytesRead(now: now, count: total), c) }
    }

    /// Does what the machine asked.
    func perform(_ action: Action, _ c: Connection) {
        switch action {
        case .none: break
        case .parse: parse(c)
        case .discardInput:
            c.input.removeAll(keepingCapacity: true)
            c.inputStart = 0
        case .route: route(c)
        case .submit: submit(c)
        case .write(let keepAlive, let isHead):
            // The machine asks for a write only with an answer at hand; were it missing, a 500.
            let response = c.response.take() ?? .error(HTTPError.internal)
            respond(c, response, keepAlive: keepAlive, isHead: isHead)
        case .writeError(let refusal, let keepAlive):
            if log.enabled, c.inFlight == nil { c.inFlight = Connection.InFlight(method: "-", target: "-", start: now) }
            respond(c, .error(error(refusal, c)), keepAlive: keepAlive, isHead: false)
        case .shutdownWrite:
            // Lingering close: the client reads the whole answer and then our FIN, rather
            // than a reset for the bytes it sent that were never read.
            _ = Glibc.shutdown(c.fd, Int32(SHUT_WR))
            c.input.removeAll(keepingCapacity: true)
            c.inputStart = 0
        case .close: close(c)
        }
    }

    /// The answer for a refusal, with this server's Retry-After.
    private func error(_ refusal: ConnectionStateMachine.Refusal, _ c: Connection) -> HTTPError {
        let retry = configuration.retryAfterSeconds
        switch refusal {
        case .unparsable:
            defer { c.parseError = nil }
            return c.parseError ?? .badRequest("the request cannot be parsed")
        case .requestTimeout: return .requestTimeout
        case .tooManyConnections: return .tooManyConnections(retryAfter: retry)
        case .queueFull: return .queueFull(retryAfter: retry)
        case .shuttingDown: return .shuttingDown(retryAfter: retry)
        }
    }

    /// Parses what the connection has read, while its machine wants requests.
    private func parse(_ c: Connection) {
        // Re-entered when an answer written at once lets the machine ask for the next
        // pipelined request: the outer call's loop picks that up.
        guard !c.parsing else { return }
        c.parsing = true
        defer {
            c.parsing = false
            c.compactInput()
        }
        while c.unparsed > 0, c.machine.wantsRequest {
            let (consumed, result) = c.input.withUnsafeBytes { raw in
                c.parser.parse(UnsafeRawBufferPointer(rebasing: raw[c.inputStart...]))
            }
            c.inputStart += consumed
            switch result {
            case .needMore:
                perform(c.machine.needMore(parserIdle: c.parser.isIdle, now: now), c)
            case .failure(let e):
                c.input.removeAll()
                c.inputStart = 0
                c.parseError = e
                perform(c.machine.parseFailed(), c)
            case .request(let head):
                if log.enabled {
                    c.inFlight = Connection.InFlight(method: head.method, target: head.target, start: Clock.now())
                }
                c.request = head
                perform(c.machine.requestParsed(keepAlive: head.keepAlive, isHead: head.isHead), c)
            }
        }
    }

    private func route(_ c: Connection) {
        guard let head = c.request.take() else { return }
        switch handler.route(head, context: RequestContext(draining: draining, server: stats)) {
        case .respond(let r):
            c.response = r
            perform(c.machine.respondedNow(now: now), c)
        case .work(let job):
            c.job = .work(job)
            perform(c.machine.routedToWork(), c)
        case .deferred(let start):
            c.job = .deferred(start)
            perform(c.machine.routedToWork(), c)
        }
    }

    private func submit(_ c: Connection) {
        guard let job = c.job else { return }
        c.job = nil
        let ticket = WorkerPool.Ticket(loop: index, connection: c.id)
        switch job {
        case .work(let work):
            if !server.pool.submit(ticket, work) { perform(c.machine.submitRefused(), c) }
        case .deferred(let start):
            // Answered through the same completions as the pool's, so the machine sees
            // no difference: the request is out until `responseReady`.
            start(
                PoolResponder(
                    ticket: ticket, pool: server.pool, retryAfterSeconds: configuration.retryAfterSeconds,
                    gone: c.gone))
        }
    }

    private func deliverCompletions() {
        let done = completions.list.withLock { list -> [(UInt64, HTTPResponse)] in
            let l = list
            list.removeAll(keepingCapacity: true)
            return l
        }
        for (id, response) in done {
            // A connection gone meanwhile, or answered 503 at the drain deadline, drops it.
            guard let c = connections[id] else { continue }
            c.response = response
            perform(c.machine.responseReady(now: now), c)
            c.response = nil
            sync(c)
        }
    }

    // MARK: Writing

    private func respond(_ c: Connection, _ response: HTTPResponse, keepAlive: Bool, isHead: Bool) {
        c.output.load(response, date: date(), keepAlive: keepAlive, isHead: isHead)
        if var f = c.inFlight {
            f.status = response.status
            f.bytes = isHead ? 0 : response.body.length
            f.note = response.logNote
            c.inFlight = f
        }
        flush(c)
    }

    private func flush(_ c: Connection) {
        let before = c.output.sent
        let result = c.output.flush(to: c.fd)
        let bytes = Int(c.output.sent - before)
        switch result {
        case .blocked:
            perform(c.machine.wrote(done: false, bytes: bytes, now: now), c)
        case .failed:
            c.output.clear()
            perform(c.machine.peerClosed(), c)
        case .done:
            if let f = c.inFlight {
                log.record(
                    method: f.method, target: f.target, status: f.status, bytes: f.bytes,
                    nanoseconds: Clock.now() - f.start, note: f.note)
                c.inFlight = nil
            }
            perform(c.machine.wrote(done: true, bytes: bytes, inputPending: c.unparsed > 0, now: now), c)
        }
    }

    // MARK: Deadlines and shutdown

    private func fireTimers() {
        while let e = timers.popDue(now) {
            guard let c = connections[e.id], c.scheduled == e.at else { continue }
            c.scheduled = nil
            perform(c.machine.timerFired(now: now), c)
            if c.machine.cutForRate, !c.isOpen { stats.cutSlowReaders.add(1, ordering: .relaxed) }
            sync(c)
        }
    }

    private func beginDrain() {
        guard !draining else { return }
        draining = true
        drainDeadline = now + UInt64(max(0, configuration.drainTimeoutMs)) * 1_000_000
        // The server has shut the listening socket down (new connections are refused);
        // this loop stops watching it.
        unwatchListener()
        for c in Array(connections.values) {
            perform(c.machine.drainStarted(), c)
            sync(c)
        }
    }

    private func drainDeadlinePassed() {
        finalDeadline = now + Self.finalGrace
        for c in Array(connections.values) {
            c.response = nil
            perform(c.machine.drainDeadlinePassed(), c)
            sync(c)
        }
    }

    /// Tells epoll and the timer queue what the machine now wants.
    func sync(_ c: Connection) {
        guard c.isOpen else { return }
        let want = c.machine.interest
        if !c.watched {
            c.watched = true
            c.interest = want
            _ = clinux_epoll_ctl(epoll, 1, c.fd, Self.epollEvents(want), c.id)
        } else if want != c.interest {
            c.interest = want
            _ = clinux_epoll_ctl(epoll, 3, c.fd, Self.epollEvents(want), c.id)
        }
        if let d = c.machine.deadline, c.scheduled.map({ d < $0 }) ?? true {
            c.scheduled = d
            timers.schedule(d, id: c.id)
        }
    }

    static func epollEvents(_ i: ConnectionStateMachine.Interest) -> UInt32 {
        var e = UInt32(CLINUX_EPOLLRDHUP)
        if i.contains(.read) { e |= UInt32(CLINUX_EPOLLIN) }
        if i.contains(.write) { e |= UInt32(CLINUX_EPOLLOUT) }
        return e
    }

    func close(_ c: Connection) {
        guard c.isOpen else { return }
        c.isOpen = false
        c.gone.flag.store(true, ordering: .relaxed)
        connections.removeValue(forKey: c.id)
        stats.openConnections.subtract(1, ordering: .relaxed)
        c.output.clear()
        // No EPOLL_CTL_DEL first: closing the socket's only descriptor takes it out of
        // the epoll set (it is never duplicated), one system call fewer per connection.
        Glibc.close(c.fd)
    }

    func date() -> String {
        let s = Clock.wallSeconds()
        if s != dateSecond {
            dateSecond = s
            dateText = HTTPDate.format(epochSeconds: s)
        }
        return dateText
    }

    private func drainEventFD(_ fd: Int32) {
        var value: UInt64 = 0
        _ = read(fd, &value, 8)
    }

    static func poke(_ fd: Int32) {
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }
}
