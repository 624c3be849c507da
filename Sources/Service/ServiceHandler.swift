import Configuration
import Core
import HTTP
import Imgproxy
import Signing
import Stores
import Thumbor
import Workers

/// The service's route table: `/thumb` and `/info` (ServiceHandler+Thumb), imgproxy's URLs
/// (ServiceHandler+Imgproxy), thumbor's (ServiceHandler+Thumbor), `POST /purge` (ServiceHandler+Purge), `/healthz`, `/readyz`,
/// `/metrics` and the demo page `/`. A checked request goes the same way from every route
/// (ServiceHandler+Flow): the source's identity, the key, the result store, the render.
/// It knows its sources, its result store and its renderer only by protocol.
public struct ServiceHandler: HTTPHandler {
    let config: Config
    /// `limits`, made once: every request is parsed and planned against it.
    let limits: RequestLimits
    let sources: any SourceStore
    let results: any ResultStore
    let renderer: any Renderer
    /// Present when `security.signingKey` is set: every /thumb then needs a valid `sig`.
    let signer: Signer?
    /// Present when `imgproxy.key` and `imgproxy.salt` are set: imgproxy URLs are checked.
    let imgproxySigner: ImgproxySigner?
    let imgproxySettings: ImgproxyURL.Settings
    /// Present when `thumbor.securityKey` is set: signed thumbor URLs are checked.
    let thumborSigner: ThumborSigner?
    let thumborSettings: ThumborURL.Settings
    /// The page at `/` when `http.demoPage` is on; it runs on a worker.
    let demoPage: (@Sendable () -> HTTPResponse)?
    /// `images.fallback`: shown in place of a missing or undecodable source.
    let fallback: Fallback?
    let metrics = Metrics()
    let coalescer = Coalescer<Result<Rendered, ServiceFailure>>()
    /// Recently seen request targets and their keys, so a repeated URL skips parsing,
    /// the canonical form and the hash on its way to a cache hit.
    let recent = RecentKeys()
    /// Where fetches from a remote origin wait: not on the image workers. Its threads start
    /// with the first fetch, so a folder root has none.
    let fetches: ThreadPool
    /// Whether the sources fetch (an HTTP or S3 root): only then are source-cache hits
    /// and misses counted, so a folder root's requests take no lock for them.
    let countsSourceCache: Bool
    /// Whether any request may be `format=best` whatever its target says: `output.format`
    /// is best, or a preset (native or imgproxy's) names it.
    let bestWithoutSaying: Bool

    public init(
        config: Config, sources: any SourceStore, results: any ResultStore, renderer: any Renderer,
        signer: Signer?, demoPage: (@Sendable () -> HTTPResponse)? = nil, fallback: Fallback? = nil
    ) {
        self.fallback = fallback
        self.config = config
        limits = config.requestLimits
        bestWithoutSaying =
            limits.defaultFormat == .best || config.presets.values.contains { $0.contains("best") || $0.contains("%") }
            || config.imgproxy.presets.values.contains { $0.contains("best") || $0.contains("%") }
        self.sources = sources
        self.results = results
        self.renderer = renderer
        self.signer = signer
        self.demoPage = demoPage
        let ip = config.imgproxy
        imgproxySigner =
            ip.key.isEmpty || ip.salt.isEmpty
            ? nil : ImgproxySigner(keyHex: ip.key, saltHex: ip.salt, size: ip.signatureSize)
        imgproxySettings = ImgproxyURL.Settings(
            root: (try? SourceRoot(config.images.root)) ?? .folder(config.images.root),
            presets: ip.presets, keepCopyright: config.output.keepCopyright,
            watermark: config.watermarks.keys.sorted().first)
        thumborSigner = config.thumbor.securityKey.isEmpty ? nil : ThumborSigner(key: config.thumbor.securityKey)
        thumborSettings = ThumborURL.Settings(
            root: imgproxySettings.root, watermarks: Set(config.watermarks.keys))
        fetches = ThreadPool(
            name: "aspect-fetch", threads: config.sources.concurrency, queueDepth: config.sources.queueDepth)
        countsSourceCache = sources.fetchFigures != nil
    }

    /// What a render leaves for every request waiting on it.
    struct Rendered: Sendable {
        var bytes: [UInt8]
        var contentType: String
        /// The quality the encoder chose, said in `X-Quality`.
        var quality: Int? = nil
        /// `format=best`'s choice, said in `X-Format-Chosen`.
        var chosen: BestChoice? = nil
        /// An `/info` of a `format=best` output whose choice is not made yet: not to be kept
        /// by a cache (`no-cache`), under no ETag, so the next asks again.
        var undecided = false
        /// `X-Cache`: a render is a MISS; a result another replica made, from the shared tier, a HIT.
        var cache = "MISS"
    }

    public func route(_ request: HTTPRequestHead, context: RequestContext) -> Route {
        if request.path == "/purge" {
            // No admin token: no such route, whatever the method (SPEC).
            guard !config.security.adminToken.isEmpty else {
                return counted(.other, .respond(Self.error(AspectError(.notFound, "no such route: /purge"))))
            }
            return counted(.purge, purge(request))
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            var r = HTTPResponse.error(
                405, code: AspectError.Code.methodNotAllowed.rawValue,
                message: "\(request.method) is not allowed; use GET or HEAD")
            r.headers.append("Allow", "GET, HEAD")
            return counted(.other, .respond(r))
        }
        switch request.path {
        case "/healthz":
            return counted(.healthz, .respond(.text(200, "ok\n")))
        case "/readyz":
            return counted(.readyz, .respond(readiness(context)))
        case "/metrics":
            return counted(
                .metrics,
                .respond(
                    .text(
                        200,
                        metrics.exposition(
                            results: results, fetches: sources.fetchFigures, fetchQueue: fetches.queued,
                            server: context.server.snapshot, workers: renderer.workerFigures),
                        contentType: "text/plain; version=0.0.4; charset=utf-8")))
        case "/thumb":
            return counted(.thumb, thumb(request, .thumb))
        case "/info":
            return counted(.info, thumb(request, .info))
        case "/storyboard.vtt":
            return counted(.storyboard, thumb(request, .storyboard))
        case "/" where demoPage != nil:
            // It reads the images' headers: work for the pool, not the loop.
            guard let demoPage else { break }
            return counted(.demo, .work(demoPage))
        default:
            if config.thumbor.enabled, Self.isThumbor(Substring(request.rawPath), alone: !config.imgproxy.enabled) {
                return counted(.thumbor, thumbor(request))
            }
            if config.imgproxy.enabled, request.path.utf8.count > 1 {
                return counted(.imgproxy, imgproxy(request))
            }
        }
        return counted(
            .other, .respond(Self.error(AspectError(.notFound, "no such route: \(request.path); try /thumb?src=…"))))
    }

    /// Counts the answer by route and status, now or when it is given.
    func counted(_ route: Metrics.RouteLabel, _ r: Route) -> Route {
        let metrics = metrics
        switch r {
        case .respond(let response):
            metrics.request(route: route, status: response.status)
            return r
        case .work(let job):
            return .work {
                let response = job()
                metrics.request(route: route, status: response.status)
                return response
            }
        case .deferred(let start):
            return .deferred { responder in
                start(responder.observing { metrics.request(route: route, status: $0.status) })
            }
        }
    }

    /// 200 once sources can be served; 503 while draining or while the source store says
    /// it cannot serve (a folder root gone). A remote origin's health is not asked. A
    /// result store that cannot be used does not make the service unready: it serves
    /// uncached, and says so here.
    func readiness(_ context: RequestContext) -> HTTPResponse {
        if context.draining { return .text(503, "draining\n") }
        if let problem = sources.readinessProblem() ?? renderer.readinessProblem() {
            return .text(503, "not ready: \(problem)\n")
        }
        // What holds the render workers, once one has said (SPEC: Isolation).
        let sandbox =
            renderer.workerFigures?.landlock.map {
                $0 > 0
                    ? " (workers: Landlock ABI \($0), seccomp allowlist)" : " (workers: seccomp allowlist, no Landlock)"
            } ?? ""
        if let problem = results.problem ?? sources.cacheProblem {
            return .text(200, "ready, serving uncached: \(problem)\(sandbox)\n")
        }
        return .text(200, "ready\(sandbox)\n")
    }

    public static func error(_ e: AspectError) -> HTTPResponse {
        // 500s say no more than that; the log has the rest.
        let message = e.code == .internalError ? "an internal error occurred" : e.message
        // A worker lost to something outside: the next try will likely be served.
        var extra = HTTPHeaders()
        if e.code == .workerLost { extra.append("Retry-After", "1") }
        return .error(e.code.status, code: e.code.rawValue, message: message, headers: extra)
    }

    /// The public error, with the rest for the access log's note.
    static func error(_ failure: ServiceFailure) -> HTTPResponse {
        var r = error(failure.error)
        if !failure.detail.isEmpty { r.logNote = "error=\(failure.stage): \(failure.detail)" }
        return r
    }
}
