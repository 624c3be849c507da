import Batch
import Configuration
import Core
import Foundation
import HTTP
import Imaging
import Service
import Signing
import SourceStores
import Stores

/// `aspect warm --offline`: the service's own handler in this process, on the configured
/// sources and result store (`cache.dir`, and the shared tier when set), rendering where
/// the server would (`server.isolation`: sandboxed worker processes, so a decoder that
/// crashes costs its one request, not the run). A request goes exactly as it would through
/// the server: its route, its key, the store; only the socket is missing.
final class OfflineService: Sendable {
    let handler: ServiceHandler
    let results: any ResultStore
    let accept: String

    /// `configArguments`: the `--config FILE` the run was given, for the render workers.
    init?(_ configuration: Config, configArguments: [String], accept: String) {
        self.accept = accept
        var config = configuration
        Vips.routeLog(debug: false) { _, _, _ in }
        do throws(ImagingError) {
            try Vips.restrictLoaders(to: Set(config.images.formats))
            var thumbnailer = try Thumbnailer(limits: ImagingLimits(config))
            var sources = SourceRoot.store(config)
            var fallback: ServiceHandler.Fallback?
            switch FallbackWiring.wire(config, sources) {
            case .success(let wired): (fallback, sources) = wired
            case .failure(let e):
                Console.error("aspect warm: \(e)")
                return nil
            }
            if let problem = sources.readinessProblem() {
                Console.error("aspect warm: \(problem)")
                return nil
            }
            if let problem = WatermarkLoader.load(&config, into: &thumbnailer, from: sources) {
                Console.error("aspect warm: \(problem)")
                return nil
            }
            results = ServeCommand.resultStore(config)
            if let problem = results.problem {
                Console.error("aspect warm: the result store cannot be used: \(problem)")
                return nil
            }
            handler = ServiceHandler(
                config: config, sources: sources, results: results,
                renderer: ServeCommand.renderer(
                    config, thumbnailer, announce: false),
                signer: config.signingEnabled ? Signer(key: config.security.signingKey) : nil, fallback: fallback)
        } catch {
            Console.error("aspect warm: \(error)")
            return nil
        }
    }

    /// One request, as the server would route and answer it.
    func ask(_ line: String) -> BatchProgress.Outcome {
        let target = WarmRequests.target(of: line)
        var parser = RequestParser()
        let head: HTTPRequestHead
        switch parser.parse(Array("GET \(target) HTTP/1.1\r\nHost: warm\r\nAccept: \(accept)\r\n\r\n".utf8))
            .result
        {
        case .request(let h): head = h
        case .failure(let e): return .failed(target: line, status: "\(e.status)", error: e.message)
        case .needMore: return .failed(target: line, status: "400", error: "not a request target")
        }
        let r = ServiceHandler.run(
            handler.route(head, context: RequestContext(draining: false, server: NoServerFigures())))
        switch r.status {
        case 200, 304:
            return r.headers["X-Cache"]?.uppercased().hasPrefix("HIT") == true ? .hit : .made
        default:
            var message = ""
            if case .bytes(let body) = r.body { message = WarmClient.message(body) }
            return .failed(target: line, status: "\(r.status)", error: message)
        }
    }

    /// Waits (up to a minute) for the shared tier's uploads still queued.
    func finish() {
        let until = Date().addingTimeInterval(60)
        while let f = results.sharedFigures, f.queued > 0, Date() < until { Thread.sleep(forTimeInterval: 0.05) }
    }

    /// No server: its figures are zero.
    struct NoServerFigures: ServerFigures {
        var snapshot: ServerSnapshot { ServerSnapshot() }
    }
}
