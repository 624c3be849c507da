internal import CLinux
internal import CSandbox
import Core
import Foundation
import Glibc
import Stores
import Synchronization
import Syscalls

/// Renders in sandboxed worker processes started from the service's own binary (SPEC:
/// Isolation): each job takes an idle worker, hands it the source's descriptor and the
/// request, plans in this process when the worker has read the header, and takes the
/// result back. A worker that dies costs the job it held (422, or 413 for want of memory)
/// and is replaced at once (with back-off while replacements keep dying); a source that
/// killed one is refused for `poisonSeconds` without being tried again; one past its
/// deadline is killed (504). Hits never come here.
public final class ProcessRenderer: Renderer {
    public struct Settings: Sendable {
        /// The binary (`/proc/self/exe`) and the worker's whole argv: `aspect render-worker
        /// --parent PID`, no more (its settings come over its socket, never a secret in argv).
        public var executable: String
        public var arguments: [String]
        /// The worker's settings, sent as its first message (SPEC: Isolation: it reads no
        /// configuration file): JSON and the bytes that go with it.
        public var handshake: Handshake
        public var workers: Int
        /// `server.workerJobs`: renders a worker makes before it is replaced (0: never).
        public var workerJobs: Int
        /// `limits.processingTimeoutMs`: a worker still busy a second past it is killed.
        public var deadlineMs: Int
        public var poisonSeconds: Int
        /// `limits.maxResultBytes`: a larger answer is refused (502).
        public var maxResultBytes: Int64
        public var log: @Sendable (String) -> Void

        public init(
            executable: String, arguments: [String], handshake: Handshake, workers: Int, workerJobs: Int,
            deadlineMs: Int, poisonSeconds: Int, maxResultBytes: Int64, log: @escaping @Sendable (String) -> Void
        ) {
            self.executable = executable
            self.arguments = arguments
            self.handshake = handshake
            self.workers = workers
            self.workerJobs = workerJobs
            self.deadlineMs = deadlineMs
            self.poisonSeconds = poisonSeconds
            self.maxResultBytes = maxResultBytes
            self.log = log
        }
    }

    /// A worker's settings on the wire: its JSON, and a blob (watermark pixels, warm-up
    /// samples) that its JSON says how to cut.
    public struct Handshake: Sendable {
        public var json: [UInt8]
        public var blob: [UInt8]
        public init(json: [UInt8], blob: [UInt8]) {
            self.json = json
            self.blob = blob
        }
    }

    /// One worker process and the service's end of its socket; owned by the job using it.
    final class Worker: Sendable {
        let pid: pid_t
        let socket: Int32
        /// It said it is locked down and ready (its first message, read once).
        let ready = Atomic<Bool>(false)
        /// The Landlock ABI it is held by (0: none), from its ready message.
        let landlock = Atomic<Int>(-1)
        /// Renders it has made.
        let jobs = Atomic<Int>(0)
        init(pid: pid_t, socket: Int32) {
            self.pid = pid
            self.socket = socket
        }

        /// Reads the worker's ready message when it has not been read: whether it came
        /// (false: the worker ended before it was ready, or `ms` passed).
        func awaitReady(ms: Int32) -> Bool {
            if ready.load(ordering: .acquiring) { return true }
            guard csandbox_wait_readable(socket, ms) == 1 else { return false }
            var message: [UInt8] = [0, 0]
            var fd: Int32 = -1
            let n = message.withUnsafeMutableBytes { csandbox_recv(socket, $0.baseAddress, 2, &fd) }
            if fd >= 0 { close(fd) }
            guard n == 2, message[0] == Wire.ready else { return false }
            landlock.store(Int(message[1]), ordering: .relaxed)
            ready.store(true, ordering: .releasing)
            return true
        }
    }

    struct State {
        var idle: [Worker] = []
        var live = 0
        var restarts: [String: Int] = [:]
        /// Sources that killed two workers: their file's identity, until when, and why.
        var poisoned: [String: (until: UInt64, error: AspectError)] = [:]
        /// Deaths in a row with no answer between: the back-off's exponent.
        var deaths = 0
        var nextSpawn: UInt64 = 0
        var spawnProblem: String?
        /// The Landlock ABI the last worker to start said it was held by (0: none).
        var landlock: Int?
    }

    let settings: Settings
    let state = Mutex(State())
    let slots: DispatchSemaphore
    /// Wakes the watcher of idle workers when the idle set changes.
    let wake: Int32

    /// Starts `settings.workers` workers, and the thread that notices one dying idle. This
    /// process is made not dumpable first: a worker of the same uid, taken over, cannot
    /// open its `/proc` files.
    public init(_ settings: Settings) {
        self.settings = settings
        _ = csandbox_not_dumpable()
        slots = DispatchSemaphore(value: max(1, settings.workers))
        wake = clinux_eventfd()
        for _ in 0..<max(1, settings.workers) {
            if let w = spawn() { state.withLock { $0.idle.append(w) } }
        }
        let watcher = Thread { [weak self] in
            while let renderer = self, renderer.watchOnce() {}
        }
        watcher.name = "aspect-worker-watch"
        watcher.start()
    }

    public var workerFigures: WorkerFigures? {
        state.withLock { s in
            var f = WorkerFigures(live: s.live, restarts: s.restarts)
            f.landlock = s.landlock
            return f
        }
    }

    public func readinessProblem() -> String? {
        state.withLock { s in
            // None running, or none has yet said it is ready while starting them fails.
            s.live == 0 || (s.landlock == nil && s.spawnProblem != nil)
                ? "no render worker is running" + (s.spawnProblem.map { ": \($0)" } ?? "") : nil
        }
    }

    /// How long a new worker has to say it is ready.
    static let startupMs: Int32 = 10_000

    /// One round of watching the idle workers: poll their sockets (and the wake-up); a
    /// new one's ready message is read, and one whose socket reads as closed has died
    /// waiting (a signal from outside, the kernel): reaped, counted and replaced now,
    /// not when a job would have found it. False once the renderer is gone.
    func watchOnce() -> Bool {
        let idle = state.withLock { $0.idle }
        var fds = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        fds += idle.map { pollfd(fd: $0.socket, events: Int16(POLLIN), revents: 0) }
        let n = poll(&fds, nfds_t(fds.count), 1000)
        guard n > 0 else { return true }
        if fds[0].revents != 0 {
            var count: UInt64 = 0
            _ = read(wake, &count, 8)
        }
        var dead: [Worker] = []
        for (i, w) in idle.enumerated() where fds[i + 1].revents != 0 {
            state.withLock { s in
                // Still idle (a job did not take it meanwhile): its ready message, or its end.
                guard s.idle.contains(where: { $0 === w }) else { return }
                if !w.ready.load(ordering: .acquiring), w.awaitReady(ms: 0) {
                    s.landlock = w.landlock.load(ordering: .relaxed)
                    return
                }
                // The poll may be older than a job that took it and gave it back: asked again.
                guard csandbox_wait_readable(w.socket, 0) == 1 else { return }
                s.idle.removeAll { $0 === w }
                dead.append(w)
            }
        }
        for w in dead {
            // One that never said it was ready (a bad setting, a strict sandbox the kernel
            // cannot give) counts toward the back-off, so it is not restarted in a loop.
            let started = w.ready.load(ordering: .acquiring)
            _ = reap(w, forced: nil, idle: started)
            if !started {
                state.withLock { $0.spawnProblem = "a render worker ended before it was ready (see the log)" }
            }
            if state.withLock({ $0.nextSpawn <= Clock.now() && $0.live < max(1, settings.workers) }),
                let fresh = spawn()
            {
                addIdle(fresh)
            }
        }
        return true
    }

    func addIdle(_ w: Worker) {
        state.withLock { $0.idle.append(w) }
        poke()
    }

    func poke() {
        var one: UInt64 = 1
        _ = write(wake, &one, 8)
    }

    // MARK: Renderer

    public func header(_ file: OpenFile, reading: SourceReading) throws(ServiceFailure) -> SourceDescription {
        try job(file, .header(reading), order: Self.noPlanner) { answer, _ in
            guard case .header(let d) = answer else { return .failure("an answer out of turn") }
            return AnswerCheck.description(d).map { .failure(Distrusted($0)) } ?? .success(d)
        }
    }

    public func describe(_ file: OpenFile, reading: SourceReading) throws(ServiceFailure) -> SourceFacts {
        try job(file, .describe(reading), order: Self.noPlanner) { answer, blob in
            guard case .facts(var facts) = answer else { return .failure("an answer out of turn") }
            if let problem = AnswerCheck.facts(facts, previewBytes: blob.count) { return .failure(Distrusted(problem)) }
            facts.previewRGBA = blob
            return .success(facts)
        }
    }

    public func render(
        _ file: OpenFile, reading: SourceReading, wantFacts: Bool,
        order: (SourceDescription) throws(AspectError) -> RenderOrder
    ) throws(ServiceFailure) -> RenderedImage {
        var planned: RenderOrder?
        let limit = settings.maxResultBytes
        func remembered(_ d: SourceDescription) throws(AspectError) -> RenderOrder {
            let o = try order(d)
            planned = o
            return o
        }
        return try job(file, .render(reading, wantFacts: wantFacts), order: remembered) { answer, blob in
            guard case .rendered(let format, let quality, var facts, let count, let chosen) = answer, let planned else {
                return .failure("an answer out of turn")
            }
            guard count >= 0, count <= blob.count else { return .failure("a result length of \(count)") }
            if let problem = AnswerCheck.result(
                blob[..<count], format: format, chosen: chosen, order: planned, limit: limit)
            {
                return .failure(Distrusted(problem))
            }
            if let f = facts {
                if let problem = AnswerCheck.facts(f, previewBytes: blob.count - count) {
                    return .failure(Distrusted(problem))
                }
                facts?.previewRGBA = Array(blob[count...])
            }
            if let quality, !(1...100).contains(quality) { return .failure("a quality of \(quality)") }
            return .success(
                RenderedImage(
                    bytes: Array(blob[..<count]), format: format, quality: quality, facts: facts, chosen: chosen))
        }
    }

    /// header and describe ask for no plan.
    static func noPlanner(_: SourceDescription) throws(AspectError) -> RenderOrder {
        throw AspectError(.internalError, "this job needs no plan")
    }

    /// A failure a worker reports, held to what a render can fail with: another code (a
    /// worker cannot say it was lost or lied to, or that a source was poisoned) is an
    /// internal error, and what it says is cut to a length a client may read.
    static func believable(_ f: ServiceFailure) -> ServiceFailure {
        let codes: Set<AspectError.Code> = [
            .badParam, .sourceTooLarge, .unsupportedSource, .processingTimeout, .internalError,
        ]
        let code = codes.contains(f.error.code) ? f.error.code : .internalError
        return ServiceFailure(
            AspectError(code, String(f.error.message.prefix(500))), stage: String(f.stage.prefix(40)),
            detail: String(f.detail.prefix(2000)))
    }

    /// Why an answer is not believed.
    struct Distrusted: Error, ExpressibleByStringLiteral, ExpressibleByStringInterpolation {
        var reason: String
        init(stringLiteral value: String) { reason = value }
        init(stringInterpolation: DefaultStringInterpolation) {
            reason = String(stringInterpolation: stringInterpolation)
        }
        init(_ reason: String) { self.reason = reason }
    }

    static func protocolFailure(_ detail: String) -> ServiceFailure {
        ServiceFailure(
            AspectError(.workerProtocol, "the render worker gave an answer that cannot be trusted; it was replaced"),
            stage: "worker", detail: detail)
    }
}
