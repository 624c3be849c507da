import CLinux
import CSandbox
import Configuration
import Core
import Foundation
import HTTPServer
import Imaging
import Isolation
import Syscalls

/// `aspect render-worker [serve's flags]`: not for people. The service starts these
/// (SPEC: Isolation) with their socket as descriptor 3: each reads the configuration the
/// service did, sets up libvips and the watermarks, locks itself down (dies with its
/// parent, `limits.workerMemoryBytes` of address space, no new privileges, the seccomp
/// filter), then renders the jobs that come.
enum RenderWorkerCommand {
    static func run(_ arguments: [String]) -> Int32 {
        // `--parent PID` first: the service, which a worker checks it still belongs to.
        guard arguments.count >= 2, arguments[0] == "--parent", let parent = pid_t(arguments[1]) else { return 2 }
        let args = Array(arguments.dropFirst(2))
        guard case .loaded(var config) = ConfigCommand.load(args) else { return 2 }
        EventLog.configure(
            format: config.log.format == .json ? .json : .text, level: ServeCommand.eventLevel(config.log.level))
        // As the service does: a warning libvips repeats is written once.
        let repeats = RepeatFilter()
        Vips.routeLog(debug: config.log.level == .debug) { level, domain, message in
            if let line = repeats.pass(message, now: Clock.now()) {
                EventLog.write(
                    ServeCommand.eventLevel(Config.LogLevel(rawValue: level.rawValue) ?? .info), line, source: domain)
            }
        }
        var thumbnailer: Thumbnailer
        do throws(ImagingError) {
            try Vips.restrictLoaders(to: Set(config.images.formats))
            thumbnailer = try Thumbnailer(limits: ImagingLimits(config))
        } catch {
            EventLog.write(.error, "render worker: \(error)")
            return 1
        }
        clinux_limit_malloc_arenas(2)
        if !config.watermarks.isEmpty,
            let problem = WatermarkLoader.load(&config, into: &thumbnailer, from: SourceRoot.store(config))
        {
            EventLog.write(.error, "render worker: \(problem)")
            return 2
        }
        guard Sandbox.lock(memoryBytes: config.limits.workerMemoryBytes, parent: parent) else { return 1 }
        return RenderWorker.serve(socket: 3, renderer: LibvipsRenderer(thumbnailer: thumbnailer))
    }
}

/// The lock-down of a render worker, and `aspect sandbox-check`, which tests it.
enum Sandbox {
    /// Dies with its parent, at most `memoryBytes` of address space, then no new privileges
    /// and the seccomp filter (CSandbox's list). False, said in the log, when a step failed.
    /// `parent`: the service's pid; a worker whose parent is another (the service died
    /// before the death signal was set, and it was handed to init) ends. The service may be
    /// pid 1 itself, in a container.
    static func lock(memoryBytes: Int64, parent: pid_t) -> Bool {
        guard csandbox_die_with_parent() == 0, getppid() == parent else {
            EventLog.write(.error, "render worker: its parent is gone")
            return false
        }
        guard csandbox_limit_address_space(UInt64(max(0, memoryBytes))) == 0 else {
            EventLog.write(.error, "render worker: setrlimit: \(String(cString: strerror(errno)))")
            return false
        }
        let r = csandbox_lock()
        guard r == 0 else {
            EventLog.write(
                .error, "render worker: the seccomp filter cannot be installed: \(String(cString: strerror(-r)))")
            return false
        }
        return true
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
            guard case .success = OpenFileCheck.open("/proc/self/status") else { return 1 }
        default: return 2
        }
        print("survived")
        return 0
    }
}

/// A file opened and closed, for `sandbox-check file`.
enum OpenFileCheck {
    static func open(_ path: String) -> Result<Void, Error> {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(POSIXError(.ENOENT)) }
        close(fd)
        return .success(())
    }
}
