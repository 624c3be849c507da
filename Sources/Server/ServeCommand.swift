import CLinux
import Cache
import Core
import Foundation
import HTTPServer
import Imaging
import Signing
import Syscalls

/// `aspect serve`: loads the configuration, binds, serves until SIGTERM or SIGINT has
/// drained, exits 0.
enum ServeCommand {
    static func run(_ args: [String]) -> Int32 {
        let config: Config
        switch ConfigCommand.load(args) {
        case .invalid: return 2
        case .help:
            print(Usage.serve)
            return 0
        case .loaded(let c): config = c
        }
        let thumbnailer: Thumbnailer
        do throws(ImagingError) {
            thumbnailer = try Thumbnailer(limits: ImagingLimits(config))
        } catch {
            Console.error("aspect serve: \(error)")
            return 1
        }
        // glibc gives each thread that allocates at once an arena of its own; with libvips'
        // large, short-lived buffers on every worker they fragment, and RSS crept up 8-11%
        // over a 300 s soak. Two arenas kept it flat (BENCHMARKS: Soak).
        clinux_limit_malloc_arenas(2)
        raiseDescriptorLimit(config)
        let openFiles = OpenFiles(capacity: config.cache.openFiles)
        let cache = DiskCache(dir: config.cache.dir, maxBytes: config.cache.maxBytes) { openFiles.remove($0) }
        if let problem = cache.problem {
            Console.error("aspect serve: warning: serving uncached: \(problem)")
        }
        let server: HTTPServer
        do throws(SystemError) {
            server = try HTTPServer(
                configuration: serverConfiguration(config),
                handler: ServiceHandler(
                    config: config, root: ImageRoot(config.images.root), thumbnailer: thumbnailer, cache: cache,
                    openFiles: openFiles,
                    signer: config.signingEnabled ? Signer(key: config.security.signingKey) : nil))
        } catch {
            Console.error("aspect serve: cannot listen on \(config.server.host):\(config.server.port): \(error)")
            return 1
        }
        server.installSignalHandlers()
        let figures = cache.figures
        Console.error(
            "aspect serve: listening on http://\(config.server.host):\(server.port) (images \(config.images.root), "
                + "cache \(config.cache.dir): \(figures.entries) entries, \(figures.bytes) bytes)")
        server.run()
        Console.error("aspect serve: stopped")
        return 0
    }

    /// Connections and held-open cache files each take a descriptor: the soft limit is
    /// raised (up to the hard one) to fit them, with room for the rest; a warning if it cannot.
    static func raiseDescriptorLimit(_ c: Config) {
        let need = rlim_t(c.server.maxConnections + c.cache.openFiles + 256)
        var lim = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &lim) == 0, lim.rlim_cur < need else { return }
        lim.rlim_cur = min(need, lim.rlim_max)
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lim) != 0 || lim.rlim_cur < need {
            Console.error(
                "aspect serve: warning: the open-file limit (\(lim.rlim_cur)) is below the \(need) that "
                    + "server.maxConnections and cache.openFiles need; lower them or raise the limit")
        }
    }

    static func serverConfiguration(_ c: Config) -> ServerConfiguration {
        var s = ServerConfiguration()
        s.host = c.server.host
        s.port = c.server.port
        let cores = ProcessInfo.processInfo.activeProcessorCount
        // Two per core, as imgproxy does: with one per core, libvips' hand-offs between a
        // render's threads leave a core idle part of the time (README: the service).
        s.workers = c.server.workers > 0 ? c.server.workers : 2 * cores
        s.eventLoops = c.server.eventLoops > 0 ? c.server.eventLoops : cores
        s.queueDepth = c.server.queueDepth
        s.maxConnections = c.server.maxConnections
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
