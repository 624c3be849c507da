internal import CSandbox
import Core
import Foundation
import Glibc
import Stores
import Synchronization
import Syscalls

// The workers' lives: started with their descriptors and settings, taken for a job,
// given back or retired, reaped and counted (SPEC: Isolation).
extension ProcessRenderer {
    /// A worker back from a job: idle again, or replaced when it has made
    /// `settings.workerJobs` renders (`ifOld`) or its render failed (a spare started
    /// first, so no request waits on a start).
    func retire(_ worker: Worker, ifOld: Bool) {
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
    func reap(_ worker: Worker, forced: String?, idle: Bool = false, quiet: Bool = false) -> (
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
            forced ?? (signal == SIGSYS ? "seccomp" : signal != 0 ? "signal" : "exit")
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

    func checkout(fresh: Bool = false) throws(ServiceFailure) -> Worker {
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
    func spawn() -> Worker? {
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
