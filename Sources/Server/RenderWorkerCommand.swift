internal import CLinux
import Configuration
import Core
import Foundation
import HTTPServer
import Imaging
import Isolation
import Synchronization
import Syscalls

/// `aspect render-worker --parent PID`: not for people. The service starts these (SPEC:
/// Isolation) with exactly four descriptors: 0 and 1 `/dev/null`, 2 a pipe the service logs,
/// 3 its socket. Each one, while it is its only thread, restricts itself with Landlock
/// (read-only system folders, nothing written, no TCP, no signal out); then takes its
/// settings from the socket (it reads no configuration), sets up libvips and the
/// watermarks, renders the warm-up samples, takes its limits, drops every capability,
/// installs the seccomp allowlist, and renders the jobs that come.
enum RenderWorkerCommand {
    static func run(_ arguments: [String]) -> Int32 {
        // `--parent PID`: the service, which a worker checks it still belongs to.
        guard arguments.count == 2, arguments[0] == "--parent", let parent = pid_t(arguments[1]) else { return 2 }
        guard Sandbox.dieWith(parent: parent) else { return 1 }
        // Landlock first: it holds this thread and every thread started after it.
        let landlock = Sandbox.landlock()
        guard
            let (settings, blob) = RenderWorker.receiveSettings(
                WorkerSettings.self, on: 3, limit: WorkerSettings.largest),
            let (marks, samples) = settings.parts(of: blob)
        else { return 1 }
        // Plain lines: the service reads them and logs each in its own format.
        EventLog.configure(format: .text, level: settings.debug ? .debug : .info)
        if landlock < 0 || (landlock == 0 && settings.strict) {
            let why = landlock < 0 ? String(cString: strerror(-landlock)) : "the kernel has no Landlock"
            EventLog.write(settings.strict ? .error : .warning, "render worker: Landlock: \(why)")
            if settings.strict { return 1 }
        }
        // What libvips says goes to stderr, which the service reads and logs; a warning it
        // repeats is written once.
        // What the warm-up's samples make libvips say is not news: dropped.
        let repeats = RepeatFilter()
        let warming = Atomic<Bool>(true)
        Vips.routeLog(debug: settings.debug) { _, domain, message in
            guard !warming.load(ordering: .relaxed) else { return }
            if let line = repeats.pass(message, now: Clock.now()) { EventLog.write(.warning, line, source: domain) }
        }
        var thumbnailer: Thumbnailer
        do throws(ImagingError) {
            try Vips.restrictLoaders(to: settings.imaging.formats)
            thumbnailer = try Thumbnailer(limits: settings.imaging)
        } catch {
            EventLog.write(.error, "render worker: \(error)")
            return 1
        }
        thumbnailer.watermarks = marks
        clinux_limit_malloc_arenas(2)
        WarmUp.run(thumbnailer, samples: samples)
        warming.store(false, ordering: .relaxed)
        guard
            SandboxCheck.lock(
                memoryBytes: settings.memoryBytes, resultBytes: settings.resultBytes, parent: parent)
        else { return 1 }
        let budget = UInt64(max(1, settings.imaging.processingTimeoutMs / 1000)) + 5
        return RenderWorker.serve(
            socket: 3, renderer: LibvipsRenderer(thumbnailer: thumbnailer), landlock: Int(max(0, landlock))
        ) { file in
            // A render that spins is stopped by the kernel too, if the service cannot.
            Sandbox.cpuBudget(seconds: budget)
            return TestHooks.attack(file)
        }
    }
}

/// The lock-down of a render worker, said in the log, and `aspect sandbox-check`, which
/// tests it.
enum SandboxCheck {
    /// Isolation's `Sandbox.lock`; false, said in the log, when a step failed.
    static func lock(memoryBytes: Int64, resultBytes: Int64 = Defaults.Limits.maxResultBytes, parent: pid_t)
        -> Bool
    {
        switch Sandbox.lock(memoryBytes: memoryBytes, resultBytes: resultBytes, parent: parent) {
        case .success: return true
        case .failure(let why):
            EventLog.write(.error, "render worker: \(why)")
            return false
        }
    }

    /// `aspect sandbox-check WHAT`: locks down as a worker does, then tries WHAT (`socket`,
    /// `connect`, `execve`, `process`, or `thread` and `file`, which a render needs); prints
    /// `survived` and exits 0 when the process was not killed for it.
    static func check(_ args: [String]) -> Int32 {
        guard let what = args.first else { return 2 }
        // A socket made before the lock, for `connect` to try after it.
        let early = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard lock(memoryBytes: Defaults.Limits.workerMemoryBytes, parent: getppid()) else { return 1 }
        switch what {
        case "socket": _ = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        case "connect":
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(80).bigEndian
            address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(early, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case "execve":
            let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
            _ = execv("/bin/true", argv)
        case "process": _ = fork()
        case "thread":
            let done = DispatchSemaphore(value: 0)
            let t = Thread { done.signal() }
            t.start()
            guard done.wait(timeout: .now() + 5) == .success else { return 1 }
        case "file":
            // Refused with EACCES, not killed: the libraries' lazy opens fail soft.
            guard case .failure(let e) = OpenFileCheck.open("/proc/self/status"), e.code == .EACCES else { return 1 }
        default: return 2
        }
        print("survived")
        return 0
    }
}

/// A file opened and closed, for `sandbox-check file`.
enum OpenFileCheck {
    static func open(_ path: String) -> Result<Void, POSIXError> {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(POSIXError(POSIXErrorCode(rawValue: errno) ?? .ENOENT)) }
        close(fd)
        return .success(())
    }
}
