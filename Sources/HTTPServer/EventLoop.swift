import CLinux
import Glibc
import HTTP
import Synchronization

/// One event loop: a thread that owns its epoll instance and the connections it accepts
/// from the server's listening socket (shared with EPOLLEXCLUSIVE: one loop is woken per
/// new connection).
/// Handlers' CPU-bound work goes to the server's shared `WorkerPool`, whose results come
/// back to the loop that asked through its eventfd.
///
/// `@unchecked Sendable`: the connection table, parser states and buffers are touched only
/// by the thread in `run()`. What other threads touch is `completions` (a Mutex), the
/// stats (atomics) and the eventfds (written with write(2)).
final class EventLoop: @unchecked Sendable {
    let index: Int
    private let configuration: ServerConfiguration
    private let stats: ServerStats
    private let handler: any HTTPHandler
    private let epoll: Int32
    private let listenFD: Int32
    private let wakeFD: Int32
    /// The signal eventfd, registered with loop 0 only.
    private let signalFD: Int32?
    private let completions: Completions
    private let shutdownRequested: Atomic<Bool>
    private unowned let server: HTTPServer
    private var connections: [UInt64: Connection] = [:]
    private var nextID: UInt64 = 16
    private var draining = false
    private var drainDeadline: UInt64 = 0
    private var log: AccessLog
    private var dateSecond = -1
    private var dateText = ""
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// The monotonic clock read once per loop turn: deadlines are coarse, and one read
    /// per turn is cheaper than several per request.
    private var loopNow: UInt64 = 0

    private static let listenID: UInt64 = 0
    private static let wakeID: UInt64 = 1
    private static let signalID: UInt64 = 2

    init(index: Int, server: HTTPServer, sink: LoopSink, listenFD: Int32, signalFD: Int32?) throws(SystemError) {
        self.index = index
        self.server = server
        configuration = server.configuration
        stats = server.stats
        handler = server.handler
        shutdownRequested = Atomic(false)
        log = AccessLog(format: configuration.logFormat, enabled: configuration.accessLog)
        self.listenFD = listenFD
        self.signalFD = signalFD
        epoll = try Syscall.retrying("epoll_create1") { clinux_epoll_create() }
        wakeFD = sink.wakeFD
        completions = sink.completions
        let events = UInt32(CLINUX_EPOLLIN)
        try Syscall.retrying("epoll_ctl") {
            clinux_epoll_ctl(epoll, 1, listenFD, events | UInt32(CLINUX_EPOLLEXCLUSIVE), EventLoop.listenID)
        }
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
        let tick = Int32(max(5, min(100, min(configuration.headerTimeoutMs, configuration.idleTimeoutMs) / 10)))
        var nextTimers = Clock.now()
        while true {
            let n = events.withUnsafeMutableBufferPointer { clinux_epoll_wait(epoll, $0.baseAddress, 256, tick) }
            loopNow = Clock.now()
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
            let now = loopNow
            if now >= nextTimers {
                checkDeadlines(now)
                nextTimers = now + UInt64(tick) * 1_000_000
            }
            log.flush()
            if draining, connections.isEmpty || now >= drainDeadline { break }
        }
        for c in Array(connections.values) { close(c) }
        log.flush()
    }

    // MARK: Accepting

    private func acceptAll() {
        while !draining {
            let fd: Int32?
            do {
                fd = try Syscall.nonBlocking("accept4") { clinux_accept(listenFD) }
            } catch {
                // EMFILE and friends: leave the rest in the backlog for the next round.
                return
            }
            guard let fd else { return }
            if stats.openConnections.load(ordering: .relaxed) >= configuration.maxConnections {
                refuse(fd)
                continue
            }
            stats.openConnections.add(1, ordering: .relaxed)
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let c = Connection(id: nextID, fd: fd, limits: configuration.parserLimits)
            nextID += 1
            connections[c.id] = c
            c.deadline = .header(loopNow + UInt64(configuration.headerTimeoutMs) * 1_000_000)
            setInterest(c, UInt32(CLINUX_EPOLLIN) | UInt32(CLINUX_EPOLLRDHUP), add: true)
        }
    }

    /// Over `maxConnections`: a short 503 and close, without a Connection object.
    private func refuse(_ fd: Int32) {
        stats.refusedConnections.add(1, ordering: .relaxed)
        var r = HTTPResponse.error(
            503, code: "too_many_connections", message: "the server has too many open connections; retry shortly")
        r.headers.append("Retry-After", "\(configuration.retryAfterSeconds)")
        let bytes = r.head(date: date(), keepAlive: false) + (Self.bytes(of: r.body) ?? [])
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        Glibc.close(fd)
    }

    // MARK: Connection events

    private func connectionEvent(_ id: UInt64, _ events: UInt32) {
        guard let c = connections[id] else { return }
        if events & UInt32(CLINUX_EPOLLERR) != 0 {
            close(c)
            return
        }
        if events & UInt32(CLINUX_EPOLLOUT) != 0, c.phase == .writing {
            flush(c)
            guard connections[id] != nil else { return }
        }
        if events & (UInt32(CLINUX_EPOLLIN) | UInt32(CLINUX_EPOLLHUP) | UInt32(CLINUX_EPOLLRDHUP)) != 0 {
            readAvailable(c)
        }
    }

    private func readAvailable(_ c: Connection) {
        while true {
            let n: Int?
            do {
                n = try Syscall.nonBlocking("read") {
                    readBuffer.withUnsafeMutableBytes { read(c.fd, $0.baseAddress, $0.count) }
                }
            } catch {
                close(c)
                return
            }
            guard let n else { break }
            if n == 0 {
                // The peer closed (or half-closed) its side: nothing more will come.
                close(c)
                return
            }
            c.input.append(contentsOf: readBuffer[0..<n])
            if n < readBuffer.count { break }
        }
        advance(c)
    }

    /// Parses and answers what the connection has read, as far as its phase allows.
    private func advance(_ c: Connection) {
        while c.phase == .reading, c.unparsed > 0, connections[c.id] != nil {
            let (consumed, result) = c.input.withUnsafeBytes { raw in
                c.parser.parse(UnsafeRawBufferPointer(rebasing: raw[c.inputStart...]))
            }
            c.inputStart += consumed
            switch result {
            case .needMore:
                if case .idle = c.deadline, !c.parser.isIdle {
                    c.deadline = .header(loopNow + UInt64(configuration.headerTimeoutMs) * 1_000_000)
                }
            case .failure(let e):
                if log.enabled { c.inFlight = Connection.InFlight(method: "-", target: "-", start: Clock.now()) }
                c.input.removeAll()
                c.inputStart = 0
                send(c, .error(e), isHead: false, keepAlive: false)
            case .request(let head):
                if log.enabled {
                    c.inFlight = Connection.InFlight(method: head.method, target: head.target, start: Clock.now())
                }
                c.deadline = .none
                let context = RequestContext(draining: draining, stats: stats)
                switch handler.route(head, context: context) {
                case .respond(let r):
                    send(c, r, isHead: head.isHead, keepAlive: head.keepAlive)
                case .work(let job):
                    let keepAlive = head.keepAlive
                    let isHead = head.isHead
                    if server.pool.submit(WorkerPool.Ticket(loop: index, connection: c.id), job) {
                        c.phase = .processing
                        c.closeAfterWrite = !keepAlive
                        c.pendingHead = isHead
                        setInterest(c, UInt32(CLINUX_EPOLLRDHUP))
                    } else {
                        var r = HTTPResponse.error(
                            503, code: "queue_full",
                            message: "the server is busy: its processing queue is full; retry shortly")
                        r.headers.append("Retry-After", "\(configuration.retryAfterSeconds)")
                        send(c, r, isHead: isHead, keepAlive: keepAlive)
                    }
                }
            }
        }
        c.compactInput()
    }

    private func deliverCompletions() {
        let done = completions.list.withLock { list -> [(UInt64, HTTPResponse)] in
            let l = list
            list.removeAll(keepingCapacity: true)
            return l
        }
        for (id, response) in done {
            guard let c = connections[id], c.phase == .processing else {
                // The client went away meanwhile: drop the answer.
                continue
            }
            c.phase = .reading
            send(c, response, isHead: c.pendingHead, keepAlive: !c.closeAfterWrite)
        }
    }

    // MARK: Writing

    private func send(_ c: Connection, _ response: HTTPResponse, isHead: Bool, keepAlive: Bool) {
        let keep = keepAlive && !draining
        c.dropOutput()
        response.writeHead(into: &c.head, date: date(), keepAlive: keep)
        if !isHead {
            switch response.body {
            case .bytes(let b) where !b.isEmpty: c.body = .bytes(b, sent: 0)
            case .file(let file, let offset, let length) where length > 0:
                c.body = .file(file, offset: offset, remaining: length)
            default: break
            }
        }
        c.closeAfterWrite = !keep
        c.phase = .writing
        if var f = c.inFlight {
            f.status = response.status
            f.bytes = isHead ? 0 : response.body.length
            f.note = response.logNote
            c.inFlight = f
        }
        flush(c)
    }

    /// Writes as much as the socket takes; the rest waits for EPOLLOUT.
    private func flush(_ c: Connection) {
        while c.hasOutput {
            let n: Int?
            do {
                if c.headSent == c.head.count, case .file(let file, let offset, let remaining) = c.body {
                    var off = off_t(offset)
                    n = try Syscall.nonBlocking("sendfile") {
                        clinux_sendfile(c.fd, file.fd, &off, Int(min(remaining, 1 << 30)))
                    }
                    if let n, n == 0 {
                        // The file is shorter than promised: the response cannot be completed.
                        close(c)
                        return
                    }
                } else {
                    n = try Syscall.nonBlocking("sendmsg") { Self.writeBuffered(c) }
                }
            } catch {
                close(c)
                return
            }
            guard let n else { return waitWritable(c) }
            Self.consume(n, c)
            c.deadline = .write(loopNow + UInt64(configuration.writeTimeoutMs) * 1_000_000)
        }
        finishResponse(c)
    }

    private func waitWritable(_ c: Connection) {
        if case .write = c.deadline {
        } else {
            c.deadline = .write(loopNow + UInt64(configuration.writeTimeoutMs) * 1_000_000)
        }
        setInterest(c, UInt32(CLINUX_EPOLLOUT) | UInt32(CLINUX_EPOLLRDHUP))
    }

    private func finishResponse(_ c: Connection) {
        if let f = c.inFlight {
            log.record(
                method: f.method, target: f.target, status: f.status, bytes: f.bytes,
                nanoseconds: Clock.now() - f.start, note: f.note)
            c.inFlight = nil
        }
        if c.closeAfterWrite || draining {
            close(c)
            return
        }
        c.phase = .reading
        c.deadline = .idle(loopNow + UInt64(configuration.idleTimeoutMs) * 1_000_000)
        setInterest(c, UInt32(CLINUX_EPOLLIN) | UInt32(CLINUX_EPOLLRDHUP))
        if c.unparsed > 0 { advance(c) }
    }

    // MARK: Deadlines and shutdown

    private func checkDeadlines(_ now: UInt64) {
        for c in Array(connections.values) {
            switch c.deadline {
            case .none: break
            case .idle(let t) where now >= t: close(c)
            case .write(let t) where now >= t: close(c)
            case .header(let t) where now >= t:
                if log.enabled { c.inFlight = Connection.InFlight(method: "-", target: "-", start: now) }
                send(
                    c, .error(408, code: "request_timeout", message: "the request head did not arrive in time"),
                    isHead: false, keepAlive: false)
            default: break
            }
        }
    }

    private func beginDrain() {
        guard !draining else { return }
        draining = true
        drainDeadline = loopNow + UInt64(configuration.drainTimeoutMs) * 1_000_000
        // The server has shut the listening socket down (new connections are refused);
        // this loop stops watching it.
        _ = clinux_epoll_ctl(epoll, 2, listenFD, 0, 0)
        // Idle keep-alive connections have nothing in flight: close them now.
        for c in Array(connections.values) where c.phase == .reading && c.parser.isIdle && c.unparsed == 0 {
            close(c)
        }
    }

    private func close(_ c: Connection) {
        guard connections.removeValue(forKey: c.id) != nil else { return }
        stats.openConnections.subtract(1, ordering: .relaxed)
        c.dropOutput()
        _ = clinux_epoll_ctl(epoll, 2, c.fd, 0, 0)
        Glibc.close(c.fd)
    }

    private func setInterest(_ c: Connection, _ events: UInt32, add: Bool = false) {
        guard add || c.interest != events else { return }
        c.interest = events
        _ = clinux_epoll_ctl(epoll, add ? 1 : 3, c.fd, events, c.id)
    }

    private func date() -> String {
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

    /// One sendmsg(2) of what is left of the head and of a body in memory (a small body
    /// goes out with its head). When a file follows, the head goes with MSG_MORE, so the
    /// kernel sends it and the start of the file in one segment rather than a small one first.
    static func writeBuffered(_ c: Connection) -> Int {
        c.head.withUnsafeBytes { head in
            let first = UnsafeRawBufferPointer(rebasing: head[c.headSent...])
            switch c.body {
            case .bytes(let b, let sent):
                return b.withUnsafeBytes { body in
                    sendPieces(c.fd, first, UnsafeRawBufferPointer(rebasing: body[sent...]), more: false)
                }
            case .file: return sendPieces(c.fd, first, UnsafeRawBufferPointer(start: nil, count: 0), more: true)
            case nil: return sendPieces(c.fd, first, UnsafeRawBufferPointer(start: nil, count: 0), more: false)
            }
        }
    }

    /// sendmsg(2) of two pieces, either of which may be empty, with no array allocated.
    private static func sendPieces(_ fd: Int32, _ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, more: Bool)
        -> Int
    {
        func piece(_ p: UnsafeRawBufferPointer) -> iovec {
            iovec(iov_base: UnsafeMutableRawPointer(mutating: p.baseAddress), iov_len: p.count)
        }
        var pieces = a.isEmpty ? (piece(b), iovec()) : (piece(a), piece(b))
        let count = (a.isEmpty ? 0 : 1) + (b.isEmpty ? 0 : 1)
        let flags = Int32(MSG_NOSIGNAL) | (more ? Int32(MSG_MORE) : 0)
        return withUnsafeMutableBytes(of: &pieces) { raw in
            var m = msghdr()
            m.msg_iov = raw.baseAddress?.assumingMemoryBound(to: iovec.self)
            m.msg_iovlen = count
            return Int(sendmsg(fd, &m, flags))
        }
    }

    /// Marks `n` written bytes as sent: the head's first, then a body in memory's, or the file's.
    static func consume(_ n: Int, _ c: Connection) {
        var left = n
        let headLeft = c.head.count - c.headSent
        if headLeft > 0 {
            let take = min(left, headLeft)
            c.headSent += take
            left -= take
        }
        guard left > 0, let body = c.body else { return }
        switch body {
        case .bytes(let b, let sent):
            c.body = sent + left == b.count ? nil : .bytes(b, sent: sent + left)
        case .file(let file, let offset, let remaining):
            c.body =
                Int64(left) == remaining
                ? nil : .file(file, offset: offset + Int64(left), remaining: remaining - Int64(left))
        }
    }

    static func bytes(of body: HTTPResponse.Body) -> [UInt8]? {
        if case .bytes(let b) = body { return b }
        return nil
    }
}
