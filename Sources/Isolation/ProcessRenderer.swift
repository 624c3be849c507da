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
    private let state = Mutex(State())
    private let slots: DispatchSemaphore
    /// Wakes the watcher of idle workers when the idle set changes.
    private let wake: Int32

    /// Starts `settings.workers` workers, and the thread that notices one dying idle. This
    /// process is made not dumpable first: a worker of the same uid, taken over, cannot
    /// open its `/proc` files.
    public init(_ settings: Settings) {
        self.settings = settings
        _ = csandbox_not_dumpable()
        slots = DispatchSemaphore(value: max(1, settings.workers))
        wake = csandbox_eventfd()
        for _ in 0..<max(1, settings.workers) {
            if let w = spawn() { state.withLock { $0.idle.append(w) } }
        }
        let watcher = Thread { [weak self] in
            while let renderer = self, renderer.watchOnce() {}
        }
        watcher.name = "aspect-worker-watch"
        watcher.start()
    }

    /// The reasons `aspect_worker_restarts_total` counts by.
    public static let reasons = ["signal", "seccomp", "memory", "deadline", "exit", "protocol", "age", "failed"]

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
    private func watchOnce() -> Bool {
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

    private func addIdle(_ w: Worker) {
        state.withLock { $0.idle.append(w) }
        poke()
    }

    private func poke() {
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
            guard case .rendered(let format, let quality, var facts, let count) = answer, let planned else {
                return .failure("an answer out of turn")
            }
            guard count >= 0, count <= blob.count else { return .failure("a result length of \(count)") }
            if let problem = AnswerCheck.result(blob[..<count], format: format, order: planned, limit: limit) {
                return .failure(Distrusted(problem))
            }
            if let f = facts {
                if let problem = AnswerCheck.facts(f, previewBytes: blob.count - count) {
                    return .failure(Distrusted(problem))
                }
                facts?.previewRGBA = Array(blob[count...])
            }
            if let quality, !(1...100).contains(quality) { return .failure("a quality of \(quality)") }
            return .success(RenderedImage(bytes: Array(blob[..<count]), format: format, quality: quality, facts: facts))
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

    // MARK: Jobs

    /// How one try of a job on one worker ended.
    private enum Outcome {
        case answered(FromWorker, [UInt8])
        /// `refused`: the service refused the plan, so the worker decoded nothing more.
        case failed(ServiceFailure, refused: Bool = false)
        /// The worker died holding it: the signal (0: it exited), and whether the service
        /// killed it (`forced`: the deadline, a bad answer).
        case died(signal: Int32, forced: String?, how: String)
    }

    /// One job: tried on a worker, and once more on a fresh one if that worker died with
    /// it (SPEC: Isolation). A source two workers died of is refused for `poisonSeconds`;
    /// a worker killed from outside both times is a 503 and blames no source.
    /// `accept`: the answer held to what it may say (SPEC: Isolation), and made into the
    /// job's value; a problem it finds is a 502 and the worker goes.
    private func job<T>(
        _ file: OpenFile, _ request: ToWorker, order: (SourceDescription) throws(AspectError) -> RenderOrder,
        accept: (FromWorker, [UInt8]) -> Result<T, Distrusted>
    ) throws(ServiceFailure) -> T {
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
            throw ServiceFailure(bad, stage: "worker", detail: "refused: it killed two render workers lately")
        }
        var first: (signal: Int32, forced: String?, how: String)?
        while true {
            // The source is read again from its start by the fresh worker.
            lseek(file.fd, 0, SEEK_SET)
            // The second try in a fresh worker (SPEC: Isolation), never in one that was
            // idle beside the one that died (whatever killed that may have hit it too).
            let worker = try checkout(fresh: first != nil)
            // The render's time, from when a worker has it (a fresh one's start is not the render's).
            let deadline = Clock.now() + UInt64(max(0, settings.deadlineMs) + 1000) * 1_000_000
            switch attempt(worker, file, request, order: order, deadline: deadline) {
            case .answered(let answer, let blob):
                switch accept(answer, blob) {
                case .success(let value):
                    state.withLock { $0.deaths = 0 }
                    retire(worker, ifOld: true)
                    return value
                case .failure(let problem):
                    finish(worker, forced: "protocol")
                    throw Self.protocolFailure(problem.reason)
                }
            case .failed(let failure, let refused):
                // A render that failed may have left the worker in any state: replaced
                // (unless the service refused its plan, and it read no more than a header).
                if failure.error.code == .workerProtocol {
                    _ = finish(worker, forced: "protocol")
                } else {
                    retire(worker, ifOld: refused)
                }
                throw failure
            case .died(let signal, let forced, let how):
                if forced == "deadline" {
                    throw ServiceFailure(
                        AspectError(
                            .processingTimeout,
                            "rendering took longer than limits.processingTimeoutMs (\(settings.deadlineMs) ms)"),
                        stage: "worker", detail: "worker \(worker.pid) killed at the deadline")
                }
                if first == nil {
                    first = (signal, forced, how)
                    settings.log("render worker \(worker.pid) died holding a job (\(how)); trying it once more")
                    continue
                }
                // Killed from outside (not by the service): nothing says the source did it.
                if signal == SIGKILL, forced == nil {
                    throw ServiceFailure(
                        AspectError(.workerLost, "the render was interrupted from outside; ask again"),
                        stage: "worker", detail: "worker \(worker.pid): \(how), after \(first?.how ?? "nothing")")
                }
                let error = AspectError(
                    .decodeCrashed,
                    "the source made the renderer crash twice; it is refused for limits.poisonSeconds "
                        + "(\(settings.poisonSeconds) s)")
                let until = Clock.now() + UInt64(settings.poisonSeconds) * 1_000_000_000
                state.withLock { $0.poisoned[source] = (until, error) }
                throw ServiceFailure(
                    error, stage: "worker", detail: "worker \(worker.pid): \(how), after \(first?.how ?? "nothing")")
            }
        }
    }

    /// One try of a job on `worker`: the request with the source beside it, the plan asked
    /// for (once) and given, the answer.
    private func attempt(
        _ worker: Worker, _ file: OpenFile, _ request: ToWorker,
        order: (SourceDescription) throws(AspectError) -> RenderOrder, deadline: UInt64
    ) -> Outcome {
        var planned = false
        var refused = false
        do throws(Wire.Problem) {
            try Wire.send(request, on: worker.socket, fd: file.fd)
            while true {
                let at = Clock.now()
                let left = deadline > at ? Int32(min((deadline - at) / 1_000_000, UInt64(Int32.max))) : 0
                if settings.deadlineMs > 0, csandbox_wait_readable(worker.socket, max(1, left)) == 0 {
                    kill(worker.pid, SIGKILL)
                    return died(worker, forced: "deadline")
                }
                let (answer, blob) = try Wire.receiveAnswer(
                    on: worker.socket, limit: settings.maxResultBytes + Wire.answerOverhead)
                switch answer {
                case .needOrder(let description):
                    // Once a job, about a source an honest header could describe.
                    guard !planned, case .render = request else { throw Wire.Problem.malformed("a second plan asked") }
                    if let problem = AnswerCheck.description(description) { throw Wire.Problem.malformed(problem) }
                    planned = true
                    let reply: ToWorker
                    do throws(AspectError) {
                        reply = .order(try order(description))
                    } catch {
                        reply = .orderRefused(error)
                        refused = true
                    }
                    try Wire.send(reply, on: worker.socket)
                case .failed(let f): return .failed(Self.believable(f.failure), refused: refused)
                default: return .answered(answer, blob)
                }
            }
        } catch {
            // Nonsense from a worker is its fault, not the source's: a 502, and it goes.
            if case .malformed(let why) = error { return .failed(Self.protocolFailure(why)) }
            return died(worker, forced: nil)
        }
    }

    private func died(_ worker: Worker, forced: String?) -> Outcome {
        let (signal, how) = finish(worker, forced: forced)
        return .died(signal: signal, forced: forced, how: how)
    }

    /// A worker that is done: killed if it is not dead yet, reaped, counted, replaced (at
    /// once, unless replacements keep dying). Its signal and how it ended.
    @discardableResult
    private func finish(_ worker: Worker, forced: String?) -> (signal: Int32, how: String) {
        let ended = reap(worker, forced: forced)
        if state.withLock({ $0.nextSpawn <= Clock.now() }), let w = spawn() { addIdle(w) }
        slots.signal()
        return ended
    }

    /// A worker back from a job: idle again, or replaced when it has made
    /// `settings.workerJobs` renders (`ifOld`) or its render failed (a spare started
    /// first, so no request waits on a start).
    private func retire(_ worker: Worker, ifOld: Bool) {
        let jobs = worker.jobs.add(1, ordering: .relaxed).newValue
        let old = settings.workerJobs > 0 && jobs >= settings.workerJobs
        // More workers than configured (a checkout started one while a replacement was on
        // its way): this one goes instead of back.
        let surplus = state.withLock { $0.live > max(1, settings.workers) }
        guard !ifOld || old || surplus else {
            state.withLock { $0.idle.append(worker) }
            poke()
            slots.signal()
            return
        }
        if surplus, !old {
            _ = reap(worker, forced: "age", quiet: true)
            slots.signal()
            return
        }
        if let spare = spawn() { addIdle(spare) }
        _ = reap(worker, forced: ifOld ? "age" : "failed", quiet: true)
        slots.signal()
    }

    /// Waits for the child (killing it first: a live one answered nonsense or is being
    /// retired; a dead one is a zombie until the wait, and the signal goes nowhere),
    /// closes its socket, counts it by reason; its signal (0: it exited, or the service
    /// killed it) and how it ended.
    private func reap(_ worker: Worker, forced: String?, idle: Bool = false, quiet: Bool = false) -> (
        signal: Int32, how: String
    ) {
        var status: Int32 = 0
        var reaped = waitpid(worker.pid, &status, WNOHANG) == worker.pid
        // One whose socket closed as it died may not be done dying yet: a moment's grace,
        // so its own end is read, not the kill sent here.
        for _ in 0..<10 where !reaped && forced == nil {
            usleep(20_000)
            reaped = waitpid(worker.pid, &status, WNOHANG) == worker.pid
        }
        let killedHere = !reaped
        if killedHere {
            kill(worker.pid, SIGKILL)
            while waitpid(worker.pid, &status, 0) < 0, errno == EINTR {}
        }
        close(worker.socket)
        var signal: Int32 = 0
        var code: Int32 = 0
        csandbox_status(status, &signal, &code)
        let reason =
            forced ?? (signal == SIGSYS ? "seccomp" : signal == SIGKILL ? "signal" : signal != 0 ? "signal" : "exit")
        let how = signal != 0 ? "signal \(signal)" : "exit \(code)"
        state.withLock { s in
            s.live -= 1
            s.restarts[reason, default: 0] += 1
            // A worker killed while idle (from outside), or retired, says nothing of the sources.
            if !idle, !quiet { s.deaths += 1 }
            if !idle, !quiet, s.deaths > 2 {
                // Replacements that keep dying: wait 0.1 s, doubling to 5 s, before the next.
                let wait = min(5000, 100 << min(6, s.deaths - 3))
                s.nextSpawn = Clock.now() + UInt64(wait) * 1_000_000
            }
        }
        if !quiet { settings.log("render worker \(worker.pid) ended (\(how), \(reason)); replacing it") }
        // A kill sent here is not one from outside: it blames the worker, as a crash does.
        return (killedHere ? 0 : signal, killedHere ? how + " (sent by the service)" : how)
    }

    private func checkout(fresh: Bool = false) throws(ServiceFailure) -> Worker {
        slots.wait()
        // A worker that has said it is ready first (a spare may still be warming up).
        while !fresh,
            let w = state.withLock({ s -> Worker? in
                guard let i = s.idle.lastIndex(where: { $0.ready.load(ordering: .acquiring) }) else {
                    return s.idle.popLast()
                }
                return s.idle.remove(at: i)
            })
        {
            // A new worker first says it is ready (one that ends before that, say on a bad
            // configuration, is no source's fault); then an idle one says nothing, and a
            // readable socket is its end (it died waiting).
            guard w.awaitReady(ms: Self.startupMs) else {
                _ = reap(w, forced: "exit", idle: true)
                continue
            }
            state.withLock { $0.landlock = w.landlock.load(ordering: .relaxed) }
            guard csandbox_wait_readable(w.socket, 0) == 1 else {
                poke()
                return w
            }
            _ = reap(w, forced: nil, idle: true)
        }
        // None idle: a new one, tried five times (one killed from outside while it starts
        // is no reason to fail the request).
        var killed = false
        for _ in 0..<5 {
            let now = Clock.now()
            let wait = state.withLock { s in s.nextSpawn > now ? s.nextSpawn - now : 0 }
            if wait > 0 { usleep(UInt32(min(wait / 1000, 5_000_000))) }
            guard let w = spawn() else { break }
            if w.awaitReady(ms: Self.startupMs) {
                state.withLock { $0.landlock = w.landlock.load(ordering: .relaxed) }
                return w
            }
            killed = reap(w, forced: nil, idle: true).signal == SIGKILL
        }
        slots.signal()
        if killed {
            throw ServiceFailure(
                AspectError(.workerLost, "the render workers are being stopped from outside; ask again"),
                stage: "worker", detail: "each new worker was killed before it was ready")
        }
        throw ServiceFailure(
            AspectError(.internalError, "no render worker could be started"), stage: "worker",
            detail: state.withLock { $0.spawnProblem } ?? "it ended before it was ready")
    }

    /// A new worker: its socket pair, a pipe for what it writes on stderr (read here and
    /// logged with its pid, a line at a time, rate-limited), spawned with exactly those
    /// descriptors and an allowlisted environment, then handed its settings.
    private func spawn() -> Worker? {
        var fds: [Int32] = [-1, -1]
        guard csandbox_socketpair(&fds) == 0 else {
            state.withLock { $0.spawnProblem = "socketpair: \(String(cString: strerror(errno)))" }
            return nil
        }
        var logPipe: [Int32] = [-1, -1]
        if csandbox_pipe(&logPipe) != 0 { logPipe = [-1, -1] }
        let argv = settings.arguments.map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        let envp = Self.environment(ProcessInfo.processInfo.environment).map { strdup($0) } + [nil]
        defer { for e in envp { free(e) } }
        let pid = csandbox_spawn(settings.executable, argv, envp, fds[1], logPipe[1])
        close(fds[1])
        if logPipe[1] >= 0 { close(logPipe[1]) }
        guard pid > 0 else {
            close(fds[0])
            if logPipe[0] >= 0 { close(logPipe[0]) }
            state.withLock {
                $0.spawnProblem = "spawning \(settings.executable): \(String(cString: strerror(errno)))"
            }
            return nil
        }
        if logPipe[0] >= 0 { WorkerLog.follow(logPipe[0], pid: pid, log: settings.log) }
        state.withLock { s in
            s.live += 1
            s.spawnProblem = nil
        }
        // A send the worker does not take within a few seconds (it stopped reading) fails,
        // and counts as its end: a worker cannot hold a request thread in a send.
        csandbox_send_timeout(fds[0], 5000)
        let worker = Worker(pid: pid, socket: fds[0])
        // Its settings, its first message; one that cannot take them is ended now.
        do throws(Wire.Problem) {
            try Wire.sendRaw(json: settings.handshake.json, blob: settings.handshake.blob, on: worker.socket)
        } catch {
            _ = reap(worker, forced: "exit", idle: true)
            return nil
        }
        return worker
    }

    /// The variables a worker keeps (SPEC: Isolation: no secret, no cloud credentials):
    /// where programs and locales are, libvips' own tuning, and the crash handler off
    /// (Swift's would exec a helper, which the sandbox forbids). No `HOME`: orc, libvips'
    /// code generator, finds no folder to write its code to (it could not anyway) and maps
    /// it in memory instead.
    static func environment(_ all: [String: String]) -> [String] {
        let kept = all.filter { name, _ in
            ["PATH", "LANG", "LANGUAGE", "TZ", "FONTCONFIG_FILE", "FONTCONFIG_PATH"].contains(name)
                || name.hasPrefix("LC_") || name.hasPrefix("VIPS_")
                || name.hasPrefix("TESTHOOK_ASPECT_")
        }
        return kept.map { "\($0.key)=\($0.value)" }.sorted() + ["SWIFT_BACKTRACE=enable=no"]
    }

    /// A source file's identity for poisoning: device, inode, size and modification time.
    static func identity(_ file: OpenFile) -> String {
        var st = stat()
        guard fstat(file.fd, &st) == 0 else { return "fd" }
        return "\(st.st_dev):\(st.st_ino):\(st.st_size):\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
    }
}
