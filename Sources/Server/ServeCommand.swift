internal import CLinux
import Cache
import Configuration
import Core
import Foundation
import HTTP
import HTTPServer
import Imaging
import Isolation
import Service
import SharedResults
import Signing
import SourceStores
import Stores
import Syscalls

/// `aspect serve`: loads the configuration, binds, serves until SIGTERM or SIGINT has
/// drained, exits 0.
enum ServeCommand {
    static func run(_ args: [String]) -> Int32 {
        var config: Config
        switch ConfigCommand.load(args) {
        case .invalid: return 2
        case .help:
            print(Usage.serve)
            return 0
        case .loaded(let c): config = c
        }
        // From here on every line on stderr is the event log's, in log.format: what
        // libvips and GLib say too, which would otherwise go raw to stderr.
        EventLog.configure(format: config.log.format == .json ? .json : .text, level: eventLevel(config.log.level))
        let repeats = RepeatFilter()
        Vips.routeLog(debug: config.log.level == .debug) { level, domain, message in
            if let line = repeats.pass(message, now: Clock.now()) {
                EventLog.write(eventLevel(Config.LogLevel(rawValue: level.rawValue) ?? .info), line, source: domain)
            }
        }
        var thumbnailer: Thumbnailer
        do throws(ImagingError) {
            try Vips.restrictLoaders(to: Set(config.images.formats))
            thumbnailer = try Thumbnailer(limits: ImagingLimits(config))
        } catch {
            log(.error, "\(error)")
            return 1
        }
        // glibc gives each thread that allocates at once an arena of its own; with libvips'
        // large, short-lived buffers on every worker they fragment, and RSS crept up 8-11%
        // over a 300 s soak. Two arenas kept it flat (BENCHMARKS: Soak).
        clinux_limit_malloc_arenas(2)
        raiseDescriptorLimit(&config)
        let results = resultStore(config)
        if let problem = results.problem {
            log(.warning, "serving uncached: \(problem)")
        }
        var sources = SourceRoot.store(config)
        if let problem = sources.readinessProblem() { log(.warning, problem) }
        var fallback: ServiceHandler.Fallback?
        switch FallbackWiring.wire(config, sources) {
        case .success(let wired): (fallback, sources) = wired
        case .failure(let e):
            log(.error, "\(e)")
            return 2
        }
        if let problem = WatermarkLoader.load(&config, into: &thumbnailer, from: sources) {
            log(.error, problem)
            return 2
        }
        let imaging = thumbnailer
        if let problem = sources.cacheProblem {
            log(.warning, "downloads are not kept: \(problem)")
        }
        let signer = config.signingEnabled ? Signer(key: config.security.signingKey) : nil
        var demoPage: (@Sendable () -> HTTPResponse)?
        if config.http.demoPage, let root = sources as? FolderSource {
            let limits = config.requestLimits
            let presets = config.parsedPresets
            demoPage = {
                DemoPage.render(root: root, thumbnailer: imaging, limits: limits, signer: signer, presets: presets)
            }
        }
        let server: HTTPServer
        do throws(SystemError) {
            server = try HTTPServer(
                configuration: serverConfiguration(config),
                handler: ServiceHandler(
                    config: config, sources: sources, results: results,
                    renderer: renderer(config, imaging), signer: signer, demoPage: demoPage,
                    fallback: fallback))
        } catch {
            log(.error, "cannot listen on \(config.server.host):\(config.server.port): \(error)")
            return 1
        }
        server.installSignalHandlers()
        // The cache's index fills in the background: /metrics counts it as it goes.
        log(
            .info,
            "listening on http://\(config.server.host):\(server.port) (images \(sources.name), "
                + "cache \(config.cache.dir))", always: true)
        server.run()
        log(.info, "stopped", always: true)
        return 0
    }

    /// The result store `cache.dir` names, tiered over the shared one when `cache.shared`
    /// is set (`aspect serve` and `aspect warm --offline`).
    static func resultStore(_ config: Config) -> any ResultStore {
        let disk = DiskResultStore(
            dir: config.cache.dir, maxBytes: config.cache.maxBytes, recheckMs: config.cache.recheckMs,
            openFiles: config.cache.openFiles, memoryFileBytes: Int(config.cache.memoryFileBytes))
        guard case .s3(let bucket, let prefix)? = try? SourceRoot(config.cache.shared) else { return disk }
        return TieredResultStore(
            local: disk,
            bucket: S3Bucket(
                bucket: bucket, s3: config.s3, sources: config.sources, maxBytes: max(config.cache.maxBytes, 1 << 20)),
            prefix: prefix, queueLimit: config.cache.sharedQueue, log: { log(.warning, $0) })
    }

    /// Connections, held-open cache files, sources and workers each take a descriptor: the
    /// soft limit is raised to the hard one, and `server.maxConnections` 0 becomes what is
    /// left of it after the cache's files and 256 for the rest (sources, workers, logs),
    /// at least 64; a warning when a configured figure does not fit.
    static func raiseDescriptorLimit(_ c: inout Config) {
        var lim = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &lim) == 0 else { return }
        if lim.rlim_cur < lim.rlim_max {
            let soft = lim.rlim_cur
            lim.rlim_cur = lim.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lim) != 0 { lim.rlim_cur = soft }
        }
        let available = Int(min(lim.rlim_cur, rlim_t(Int32.max)))
        let reserved = c.cache.openFiles + 256
        if c.server.maxConnections == 0 {
            c.server.maxConnections = max(64, min(1_000_000, available - reserved))
        } else if available < c.server.maxConnections + reserved {
            log(
                .warning,
                "the open-file limit (\(available)) is below the \(c.server.maxConnections + reserved) that "
                    + "server.maxConnections and cache.openFiles need; lower them or raise the limit")
        }
        log(
            .info,
            "up to \(c.server.maxConnections) connections (open-file limit \(available), "
                + "\(reserved) kept for cache files and the rest)", always: true)
    }

    /// One line of the event log, from `aspect serve`.
    static func log(_ level: EventLog.Level, _ message: String, always: Bool = false) {
        EventLog.write(level, message, source: "aspect serve", always: always)
    }

    /// A line about or from a worker, in this service's log: one a worker wrote
    /// (`render worker PID: SOURCE: LEVEL: message`) keeps its source and level, the
    /// worker's pid in front of its message.
    @Sendable static func workerLine(_ line: String) {
        let parts = line.components(separatedBy: ": ")
        if parts.count >= 4, parts[0].hasPrefix("render worker "),
            let level = ["debug": EventLog.Level.debug, "info": .info, "warning": .warning, "error": .error][parts[2]]
        {
            EventLog.write(level, parts[0] + ": " + parts[3...].joined(separator: ": "), source: parts[1])
        } else {
            log(.warning, line)
        }
    }

    static func eventLevel(_ l: Config.LogLevel) -> EventLog.Level {
        switch l {
        case .debug: .debug
        case .info: .info
        case .warn: .warning
        case .error: .error
        }
    }

    /// Where renders run (SPEC: Isolation): `server.workers` sandboxed worker processes
    /// started from this binary with the same configuration flags, or this process's
    /// libvips. `aspect warm --offline` uses it too (`announce` false: its stderr is the bar).
    static func renderer(
        _ config: Config, _ thumbnailer: Thumbnailer, announce: Bool = true
    ) -> any Renderer {
        guard config.server.isolation == .process else {
            if announce { log(.info, "renders run in this process (server.isolation=thread)", always: true) }
            return LibvipsRenderer(thumbnailer: thumbnailer)
        }
        let workers = serverConfiguration(config).workers
        var (executable, arguments) = ("/proc/self/exe", ["aspect", "render-worker", "--parent", String(getpid())])
        #if DEBUG
            // The tests' worker that lies (Tests/Helpers/fake-worker.py): debug builds only.
            if let fake = ProcessInfo.processInfo.environment["TESTHOOK_ASPECT_WORKER"] {
                (executable, arguments[0]) = (fake, fake)
            }
        #endif
        let renderer = ProcessRenderer(
            ProcessRenderer.Settings(
                executable: executable, arguments: arguments,
                handshake: WorkerSettings.handshake(config, thumbnailer), workers: workers,
                workerJobs: config.server.workerJobs, deadlineMs: config.limits.processingTimeoutMs,
                poisonSeconds: config.limits.poisonSeconds, maxResultBytes: config.limits.maxResultBytes,
                log: workerLine))
        if announce {
            log(
                .info,
                "renders run in \(workers) sandboxed worker processes (server.isolation=process, "
                    + "limits.workerMemoryBytes \(config.limits.workerMemoryBytes))", always: true)
        }
        return renderer
    }

    static func serverConfiguration(_ c: Config) -> ServerConfiguration {
        var s = ServerConfiguration()
        s.host = c.server.host
        s.port = c.server.port
        let cores = ProcessInfo.processInfo.activeProcessorCount
        // Two per core, as imgproxy does: with one per core, libvips' hand-offs between a
        // render's threads leave a core idle part of the time (docs/design.md: choices).
        s.workers = c.server.workers > 0 ? c.server.workers : 2 * cores
        s.eventLoops = c.server.eventLoops > 0 ? c.server.eventLoops : cores
        s.queueDepth = c.server.queueDepth
        s.maxConnections = c.server.maxConnections > 0 ? c.server.maxConnections : 1024
        s.minSendBytesPerSecond = c.server.minSendBytesPerSecond
        s.headerTimeoutMs = c.server.headerTimeoutMs
        s.idleTimeoutMs = c.server.idleTimeoutMs
        s.writeTimeoutMs = c.server.writeTimeoutMs
        s.drainTimeoutMs = c.server.drainTimeoutMs
        s.lingerTimeoutMs = c.server.lingerTimeoutMs
        s.acceptBackoffMs = c.server.acceptBackoffMs
        s.accessLog = c.log.access
        s.logFormat = c.log.format == .json ? .json : .text
        return s
    }
}
