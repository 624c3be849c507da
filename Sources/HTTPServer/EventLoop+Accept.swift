internal import CLinux
import Glibc
import Syscalls

/// When accept(2) fails for want of descriptors or memory, the listener is still readable,
/// so a level-triggered loop would call it again at once and burn a core. It stops
/// watching the listener for `backoff` instead (as nginx does), and says so in the log
/// once per `logInterval` at most.
struct AcceptBackoff: Sendable {
    /// While paused: when to watch the listener again.
    private(set) var resumeAt: UInt64?
    private var nextLog: UInt64 = 0
    /// Pauses since the last log line.
    private var unlogged = 0

    static let logInterval: UInt64 = 10_000_000_000

    /// Whether an accept(2) failure is the process or system running out of something:
    /// EMFILE, ENFILE, ENOBUFS, ENOMEM.
    static func isExhaustion(_ errno: Int32) -> Bool {
        errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM
    }

    /// An exhaustion error: pause until `now + backoff`. Returns the number of pauses to
    /// report when a log line is due now, nil when it is not.
    mutating func pause(now: UInt64, backoff: UInt64) -> Int? {
        resumeAt = now + backoff
        unlogged += 1
        guard now >= nextLog else { return nil }
        nextLog = now + Self.logInterval
        defer { unlogged = 0 }
        return unlogged
    }

    /// True (and no longer paused) when the pause is over by `now`.
    mutating func resume(now: UInt64) -> Bool {
        guard let r = resumeAt, now >= r else { return false }
        resumeAt = nil
        return true
    }
}

extension EventLoop {
    func acceptAll() {
        while !draining, accept.resumeAt == nil {
            let fd: Int32?
            do {
                fd = try Syscall.nonBlocking("accept4") { clinux_accept(listenFD) }
            } catch {
                if AcceptBackoff.isExhaustion(error.errno) {
                    pauseAccepting(error)
                    return
                }
                // The one connection failed before it was taken: take the next. Anything
                // else (EINVAL once the server shut the listener down) ends this round.
                if error.errno == ECONNABORTED || error.errno == EPROTO || error.errno == EPERM { continue }
                return
            }
            // TCP_NODELAY comes from the listener (Listener.open).
            guard let fd else { return }
            let c = Connection(
                id: nextID, fd: fd, limits: configuration.parserLimits,
                machine: ConnectionStateMachine(now: now, timeouts: timeouts))
            nextID += 1
            // Full: a connection that can be given up makes room (issue 44); only when none
            // can is the newcomer refused.
            let over =
                stats.openConnections.load(ordering: .relaxed) >= configuration.maxConnections && !shedOne()
            stats.openConnections.add(1, ordering: .relaxed)
            connections[c.id] = c
            if over {
                // Answered 503 and closed gracefully; it counts as open until then.
                stats.refusedConnections.add(1, ordering: .relaxed)
                perform(c.machine.refused(), c)
            } else {
                // The request has mostly arrived with the handshake: read it now, and a
                // hit on a connection the client closes is answered and closed without
                // ever entering the epoll set. `sync` adds the connection when it waits.
                readAvailable(c)
            }
            sync(c)
        }
    }

    /// Gives up the connection of this loop that can best be spared (`Shedding.choose`),
    /// counting it by reason; false when every one is mid-render or mid-transfer at a
    /// healthy rate.
    func shedOne() -> Bool {
        let candidates = connections.values.compactMap { c -> Shedding.Candidate? in
            guard c.isOpen, let (reason, rate) = c.machine.shedCandidate(now: now) else { return nil }
            return Shedding.Candidate(id: c.id, reason: reason, rate: rate, since: c.machine.since)
        }
        guard let victim = Shedding.choose(candidates), let c = connections[victim.id] else { return false }
        stats.shed.withLock { $0[victim.reason.index] += 1 }
        perform(c.machine.shed(), c)
        sync(c)
        return true
    }

    private func pauseAccepting(_ error: SystemError) {
        stats.acceptPauses.add(1, ordering: .relaxed)
        unwatchListener()
        let backoff = UInt64(max(1, configuration.acceptBackoffMs)) * 1_000_000
        if let count = accept.pause(now: now, backoff: backoff) {
            EventLog.write(
                .warning,
                "accept failed: \(error); not accepting for \(configuration.acceptBackoffMs) ms"
                    + (count > 1 ? " (\(count) pauses since the last report)" : ""))
        }
    }

    func resumeAcceptingIfDue() {
        guard accept.resume(now: now), !draining else { return }
        try? watchListener()
    }

    func watchListener() throws(SystemError) {
        let events = UInt32(CLINUX_EPOLLIN) | UInt32(CLINUX_EPOLLEXCLUSIVE)
        try Syscall.retrying("epoll_ctl") { clinux_epoll_ctl(epoll, 1, listenFD, events, EventLoop.listenID) }
    }

    /// Stops watching the listener (EPOLLEXCLUSIVE allows no modify: it is deleted and
    /// added again).
    func unwatchListener() {
        _ = clinux_epoll_ctl(epoll, 2, listenFD, 0, 0)
    }
}
