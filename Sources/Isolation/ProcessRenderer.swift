import CSandbox
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
        /// The binary and its arguments: `aspect render-worker` and the serve flags, so the
        /// worker reads the configuration the service did.
        public var command: [String]
        public var workers: Int
        /// `limits.processingTimeoutMs`: a worker still busy a second past it is killed.
        public var deadlineMs: Int
        public var poisonSeconds: Int
        public var log: @Sendable (String) -> Void

        public init(
            command: [String], workers: Int, deadlineMs: Int, poisonSeconds: Int,
            log: @escaping @Sendable (String) -> Void
        ) {
            self.command = command
            self.workers = workers
            self.deadlineMs = deadlineMs
            self.poisonSeconds = poisonSeconds
            self.log = log
        }
    }

    /// One worker process and the service's end of its socket; owned by the job using it.
    final class Worker: Sendable {
        let pid: pid_t
        let socket: Int32
        /// It said it is locked down and ready (its first message, read once).
        let ready = Atomic<Bool>(false)
        init(pid: pid_t, socket: Int32) {
            self.pid = pid
            self.socket = socket
        }

        /// Reads the worker's ready message when it has not been read: whether it came
        /// (false: the worker ended before it was ready, or `ms` passed).
        func awaitReady(ms: Int32) -> Bool {
            if ready.load(ordering: .acquiring) { return true }
            guard csandbox_wait_readable(socket, ms) == 1 else { return false }
            var byte: UInt8 = 0
            var fd: Int32 = -1
            let n = csandbox_recv(socket, &byte, 1, &fd)
            if fd >= 0 { close(fd) }
            guard n == 1, byte == Wire.ready else { return false }
            ready.store(true, ordering: .releasing)
            return true
        }
    }

    struct State {
        var idle: [Worker] = []
        var live = 0
        var restarts: [String: Int] = [:]
        /// Sources that killed a worker: their file's identity, until when, and why.
        var poisoned: [String: (until: UInt64, error: AspectError)] = [:]
        /// Deaths in a row with no answer between: the back-off's exponent.
        var deaths = 0
        var nextSpawn: UInt64 = 0
        var spawnProblem: String?
    }

    let settings: Settings
    private let state = Mutex(State())
    private let slots: DispatchSemaphore

    /// Starts `settings.workers` workers.
    public init(_ settings: Settings) {
        self.settings = settings
        slots = DispatchSemaphore(value: max(1, settings.workers))
        for _ in 0..<max(1, settings.workers) {
            if let w = spawn() { state.withLock { $0.idle.append(w) } }
        }
    }

    /// The reasons `aspect_worker_restarts_total` counts by.
    public static let reasons = ["signal", "seccomp", "memory", "deadline", "exit"]

    public var workerFigures: WorkerFigures? {
        sweep()
        return state.withLock { s in WorkerFigures(live: s.live, restarts: s.restarts) }
    }

    public func readinessProblem() -> String? {
        sweep()
        return state.withLock { s in
            s.live == 0 ? "no render worker is running" + (s.spawnProblem.map { ": \($0)" } ?? "") : nil
        }
    }

    /// How long a new worker has to say it is ready.
    static let startupMs: Int32 = 10_000

    /// Idle workers that died waiting (a signal from outside, the kernel): reaped, counted
    /// and replaced now, not when a job would have found them. A new worker's ready message
    /// is read here too, so that it is not taken for its end.
    private func sweep() {
        let dead = state.withLock { s -> [Worker] in
            let gone = s.idle.filter { w in
                csandbox_wait_readable(w.socket, 0) == 1 && (w.ready.load(ordering: .acquiring) || !w.awaitReady(ms: 0))
            }
            s.idle.removeAll { w in gone.contains { $0 === w } }
            return gone
        }
        for w in dead {
            _ = reap(w, forced: nil, idle: true)
            if let fresh = spawn() { state.withLock { $0.idle.append(fresh) } }
        }
    }

    // MARK: Renderer

    public func header(_ file: OpenFile, reading: SourceReading) throws(ServiceFailure) -> SourceDescription {
        switch try job(file, .header(reading), order: Self.noPlanner).0 {
        case .header(let d): return d
        default: throw Self.confused
        }
    }

    public func describe(_ file: OpenFile, reading: SourceReading) throws(ServiceFailure) -> SourceFacts {
        let (answer, blob) = try job(file, .describe(reading), order: Self.noPlanner)
        guard case .facts(var facts) = answer else { throw Self.confused }
        facts.previewRGBA = blob
        return facts
    }

    public func render(
        _ file: OpenFile, reading: SourceReading, wantFacts: Bool,
        order: (SourceDescription) throws(AspectError) -> RenderOrder
    ) throws(ServiceFailure) -> RenderedImage {
        let (answer, blob) = try job(file, .render(reading, wantFacts: wantFacts), order: order)
        guard case .rendered(let format, let quality, var facts, let count) = answer, count >= 0, count <= blob.count
        else {
            throw Self.confused
        }
        facts?.previewRGBA = Array(blob[count...])
        return RenderedImage(bytes: Array(blob[..<count]), format: format, quality: quality, facts: facts)
    }

    /// header and describe ask for no plan.
    static func noPlanner(_: SourceDescription) throws(AspectError) -> RenderOrder {
        throw AspectError(.internalError, "this job needs no plan")
    }

    static let confused = ServiceFailure(
        AspectError(.internalError, "the render worker answered out of turn"), stage: "worker")

    // MARK: Jobs

    /// One job on one worker: the request with the source beside it, plans asked for and
    /// given, the answer; a death, a deadline or a poisoned source as the failures they are.
    private func job(
        _ file: OpenFile, _ request: ToWorker, order: (SourceDescription) throws(AspectError) -> RenderOrder
    ) throws(ServiceFailure) -> (FromWorker, [UInt8]) {
        let source = Self.identity(file)
        let now = Clock.now()
        if let bad = state.withLock({ s -> AspectError? in
            // Expired entries go as they are met, and all of them when the map grows large.
            if s.poisoned.count > 10_000 { s.poisoned = s.poisoned.filter { $0.value.until > now } }
            guard let p = s.poisoned[source] else { return nil }
            if p.until > now { return p.error }
            s.poisoned[source] = nil
            return nil
        }) {
            throw ServiceFailure(bad, stage: "worker", detail: "refused: it killed a render worker lately")
        }
        let worker = try checkout()
        let deadline = now + UInt64(max(0, settings.deadlineMs) + 1000) * 1_000_000
        var outcome: Result<(FromWorker, [UInt8]), ServiceFailure>?
        do throws(Wire.Problem) {
            try Wire.send(request, on: worker.socket, fd: file.fd)
            exchange: while true {
                let at = Clock.now()
                let left = deadline > at ? Int32((deadline - at) / 1_000_000) : 0
                if settings.deadlineMs > 0, csandbox_wait_readable(worker.socket, max(1, left)) == 0 {
                    kill(worker.pid, SIGKILL)
                    _ = died(worker, source: nil, forced: "deadline")
                    outcome = .failure(
                        ServiceFailure(
                            AspectError(
                                .processingTimeout,
                                "rendering took longer than limits.processingTimeoutMs (\(settings.deadlineMs) ms)"),
                            stage: "worker", detail: "worker \(worker.pid) killed at the deadline"))
                    break exchange
                }
                let (answer, blob) = try Wire.receiveAnswer(on: worker.socket)
                switch answer {
                case .needOrder(let description):
                    let reply: ToWorker
                    do throws(AspectError) {
                        reply = .order(try order(description))
                    } catch {
                        reply = .orderRefused(error)
                    }
                    try Wire.send(reply, on: worker.socket)
                case .failed(let f):
                    checkin(worker)
                    outcome = .failure(f.failure)
                    break exchange
                default:
                    checkin(worker)
                    outcome = .success((answer, blob))
                    break exchange
                }
            }
        } catch {
            // Nonsense from a worker is its fault, not the source's: ended, not poisoned.
            if case .malformed = error {
                outcome = .failure(died(worker, source: nil, forced: "exit"))
            } else {
                outcome = .failure(died(worker, source: source, forced: nil))
            }
        }
        guard let outcome else { throw Self.confused }
        return try outcome.get()
    }

    /// A worker that answered no more: reaped, counted, replaced; the source poisoned. The
    /// failure the job it held gets.
    private func died(_ worker: Worker, source: String?, forced: String?) -> ServiceFailure {
        let (signal, how) = reap(worker, forced: forced)
        // A SIGKILL nobody here sent: the kernel's OOM killer (an operator's looks the same).
        let error =
            signal == SIGKILL && forced == nil
            ? AspectError(
                .sourceTooLarge, "rendering the source needs more memory than limits.workerMemoryBytes allows")
            : AspectError(
                .decodeCrashed,
                "the source made the renderer crash; it is refused for limits.poisonSeconds (\(settings.poisonSeconds) s)"
            )
        let until = Clock.now() + UInt64(settings.poisonSeconds) * 1_000_000_000
        state.withLock { s in
            if let source, forced != "deadline" { s.poisoned[source] = (until, error) }
        }
        // Replaced at once, unless they keep dying.
        if state.withLock({ $0.nextSpawn <= Clock.now() }), let w = spawn() {
            state.withLock { $0.idle.append(w) }
        }
        slots.signal()
        return ServiceFailure(error, stage: "worker", detail: "worker \(worker.pid): \(how)")
    }

    /// Waits for the child, closes its socket, counts it by reason; its signal (0: it
    /// exited) and how it ended, in words.
    private func reap(_ worker: Worker, forced: String?, idle: Bool = false) -> (signal: Int32, how: String) {
        // A worker that answered nonsense is alive: ended here, so that the wait returns.
        // (Dead already, it is a zombie until the wait, and the signal goes nowhere.)
        kill(worker.pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(worker.pid, &status, 0) < 0, errno == EINTR {}
        close(worker.socket)
        var signal: Int32 = 0
        var code: Int32 = 0
        csandbox_status(status, &signal, &code)
        let reason =
            forced ?? (signal == SIGSYS ? "seccomp" : signal == SIGKILL ? "memory" : signal != 0 ? "signal" : "exit")
        let how = signal != 0 ? "signal \(signal)" : "exit \(code)"
        state.withLock { s in
            s.live -= 1
            s.restarts[reason, default: 0] += 1
            // A worker killed while idle (from outside) says nothing of the sources.
            if !idle { s.deaths += 1 }
            if !idle, s.deaths > 2 {
                // Replacements that keep dying: wait 0.1 s, doubling to 5 s, before the next.
                let wait = min(5000, 100 << min(6, s.deaths - 3))
                s.nextSpawn = Clock.now() + UInt64(wait) * 1_000_000
            }
        }
        settings.log("render worker \(worker.pid) ended (\(how), \(reason)); replacing it")
        return (signal, how)
    }

    private func checkout() throws(ServiceFailure) -> Worker {
        slots.wait()
        while let w = state.withLock({ $0.idle.popLast() }) {
            // A new worker first says it is ready (one that ends before that, say on a bad
            // configuration, is no source's fault); then an idle one says nothing, and a
            // readable socket is its end (it died waiting).
            guard w.awaitReady(ms: Self.startupMs) else {
                _ = reap(w, forced: "exit", idle: true)
                continue
            }
            guard csandbox_wait_readable(w.socket, 0) == 1 else { return w }
            _ = reap(w, forced: nil, idle: true)
        }
        let now = Clock.now()
        let wait = state.withLock { s in s.nextSpawn > now ? s.nextSpawn - now : 0 }
        if wait > 0 { usleep(UInt32(min(wait / 1000, 5_000_000))) }
        guard let w = spawn(), w.awaitReady(ms: Self.startupMs) else {
            slots.signal()
            throw ServiceFailure(
                AspectError(.internalError, "no render worker could be started"), stage: "worker",
                detail: state.withLock { $0.spawnProblem } ?? "it ended before it was ready")
        }
        return w
    }

    private func checkin(_ worker: Worker) {
        state.withLock { s in
            s.idle.append(worker)
            s.deaths = 0
        }
        slots.signal()
    }

    private func spawn() -> Worker? {
        var fds: [Int32] = [-1, -1]
        guard csandbox_socketpair(&fds) == 0 else {
            state.withLock { $0.spawnProblem = "socketpair: \(String(cString: strerror(errno)))" }
            return nil
        }
        let argv = settings.command.map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        // Swift's crash backtracer would exec a helper, which the sandbox forbids: a crash
        // then reads as the sandbox's kill. The worker's crash is told by its signal alone.
        // Secrets a render never needs stay out of a worker's environment.
        let environment =
            ProcessInfo.processInfo.environment.filter { $0.key != "SWIFT_BACKTRACE" && !Self.secrets.contains($0.key) }
            .map { "\($0.key)=\($0.value)" } + ["SWIFT_BACKTRACE=enable=no"]
        let envp = environment.map { strdup($0) } + [nil]
        defer { for e in envp { free(e) } }
        let pid = settings.command.isEmpty ? -1 : csandbox_spawn(settings.command[0], argv, envp, fds[1])
        close(fds[1])
        guard pid > 0 else {
            close(fds[0])
            state.withLock {
                $0.spawnProblem = "spawning \(settings.command.first ?? ""): \(String(cString: strerror(errno)))"
            }
            return nil
        }
        state.withLock { s in
            s.live += 1
            s.spawnProblem = nil
        }
        return Worker(pid: pid, socket: fds[0])
    }

    /// The variables of secrets that only the service uses: signing keys, the admin token,
    /// imgproxy's and thumbor's keys. (S3's stay: a watermark may come from the bucket.)
    static let secrets: Set<String> = [
        "ASPECT_SECURITY_SIGNINGKEY", "ASPECT_SECURITY_ADMINTOKEN", "ASPECT_IMGPROXY_KEY", "ASPECT_IMGPROXY_SALT",
        "IMGPROXY_KEY", "IMGPROXY_SALT", "THUMBOR_SECURITY_KEY", "ASPECT_THUMBOR_SECURITYKEY",
    ]

    /// A source file's identity for poisoning: device, inode, size and modification time.
    static func identity(_ file: OpenFile) -> String {
        var st = stat()
        guard fstat(file.fd, &st) == 0 else { return "fd" }
        return "\(st.st_dev):\(st.st_ino):\(st.st_size):\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
    }
}
