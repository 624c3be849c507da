import Cache
import Core
import Foundation
import Glibc
import HTTP
import HTTPServer
import Imaging
import Signing

/// The service's routes: `/thumb`, `/healthz`, `/readyz`, `/metrics`, and the demo page `/`.
struct ServiceHandler: HTTPHandler {
    let config: Config
    /// Every source's real path must be under it.
    let root: ImageRoot
    let thumbnailer: Thumbnailer
    let cache: DiskCache
    /// The cache's files held open for hits.
    let openFiles: OpenFiles
    /// Present when `security.signingKey` is set: every /thumb then needs a valid `sig`.
    let signer: Signer?
    let metrics = Metrics()
    let coalescer = Coalescer<Result<Rendered, ImagingError>>()
    /// Recently seen request targets and their keys, so a repeated URL skips parsing,
    /// the canonical form and the hash on its way to a cache hit.
    let recent = RecentKeys()

    /// What a render leaves for every request waiting on it.
    struct Rendered: Sendable {
        var bytes: [UInt8]
        var format: ImageFormat
    }

    func route(_ request: HTTPRequestHead, context: RequestContext) -> Route {
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
                        200, metrics.exposition(cache: cache, server: context.stats),
                        contentType: "text/plain; version=0.0.4; charset=utf-8")))
        case "/thumb":
            return counted(.thumb, thumb(request))
        case "/" where config.http.demoPage:
            // It reads the images' headers: work for the pool, not the loop.
            let (root, thumbnailer, limits, signer) = (root, thumbnailer, config.requestLimits, signer)
            return counted(
                .demo, .work { DemoPage.render(root: root, thumbnailer: thumbnailer, limits: limits, signer: signer) })
        default:
            return counted(
                .other,
                .respond(Self.error(AspectError(.notFound, "no such route: \(request.path); try /thumb?src=…"))))
        }
    }

    /// Counts the answer by route and status, now or when the work is done.
    private func counted(_ route: Metrics.RouteLabel, _ r: Route) -> Route {
        switch r {
        case .respond(let response):
            metrics.request(route: route, status: response.status)
            return r
        case .work(let job):
            let metrics = metrics
            return .work {
                let response = job()
                metrics.request(route: route, status: response.status)
                return response
            }
        }
    }

    /// 200 once the image root can be read; 503 while draining. The root's path is
    /// resolved anew for each probe, so a root that was swapped or went away is told as it
    /// is now. A cache that cannot be used does not make the service unready: it serves
    /// uncached, and says so here.
    private func readiness(_ context: RequestContext) -> HTTPResponse {
        if context.draining { return .text(503, "draining\n") }
        if let problem = root.refresh(force: true).problem {
            return .text(503, "not ready: images.root \(config.images.root) cannot be used: \(problem)\n")
        }
        guard access(config.images.root, R_OK | X_OK) == 0 else {
            return .text(503, "not ready: images.root \(config.images.root) cannot be read\n")
        }
        if let problem = cache.problem { return .text(200, "ready, serving uncached: \(problem)\n") }
        return .text(200, "ready\n")
    }

    // MARK: /thumb

    private func thumb(_ request: HTTPRequestHead) -> Route {
        let accept = request.headers["Accept"]
        let acceptsWebP = AcceptHeader.accepts(accept ?? "", "image/webp")
        let memoKey = RecentKeys.Target(query: request.query, acceptsWebP: acceptsWebP)
        if let known = recent.get(memoKey), root.identity(known.source, src: known.src) == known.identity,
            let served = serveCached(request, key: known.key, headers: known.headers)
        {
            return served
        }
        let params: QueryParameters
        do throws(AspectError) {
            params = try QueryParameters.decode(request.query)
        } catch {
            return .respond(Self.error(error))
        }
        if let signer {
            // Checked on the parameters as sent, before anything else is looked at.
            guard let sig = params.pairs.first(where: { $0.name == "sig" })?.value else {
                return .respond(
                    Self.error(AspectError(.badSignature, "sig is required: this server only serves signed URLs")))
            }
            guard signer.verify(sig, params) else {
                return .respond(Self.error(AspectError(.badSignature, "sig does not match this request")))
            }
        }
        let parsed: ThumbRequest
        do throws(AspectError) {
            parsed = try ThumbRequest.parse(params, limits: config.requestLimits)
        } catch {
            return .respond(Self.error(error))
        }
        let source: ImageRoot.Source
        switch root.confine(parsed.src) {
        case .success(let s): source = s
        case .failure(let e): return .respond(Self.error(e))
        }
        guard let identity = root.identity(source, src: parsed.src) else {
            return .respond(Self.error(AspectError(.notFound, "no such source image: \(parsed.src)")))
        }
        // For auto, what varies with the client is whether WebP is acceptable.
        let formatTag = parsed.format == .auto ? (acceptsWebP ? "auto+webp" : "auto") : parsed.format.rawValue
        let key = CacheKey(
            canonical: parsed.canonical, source: identity, format: formatTag, rendering: config.images.renderingTag)
        let headers = commonHeaders(key, auto: parsed.format == .auto)
        recent.set(
            memoKey, RecentKeys.Known(src: parsed.src, source: source, identity: identity, key: key, headers: headers))
        if let served = serveCached(request, key: key, headers: headers) { return served }
        metrics.miss()
        let job = RenderJob(
            root: root, source: source, request: parsed, accept: accept, key: key, headers: headers,
            limits: config.requestLimits,
            thumbnailer: thumbnailer, cache: cache, metrics: metrics, coalescer: coalescer)
        return .work { job.run() }
    }

    /// A 304 for a matching If-None-Match, or the cached file; nil on a miss.
    private func serveCached(_ request: HTTPRequestHead, key: CacheKey, headers: HTTPHeaders) -> Route? {
        // Renders are deterministic, so a client holding this ETag holds these bytes,
        // whether or not the cache still has them.
        if Self.matches(request.headers.values("If-None-Match"), key) {
            return .respond(HTTPResponse(status: 304, headers: headers, logNote: "cache=HIT"))
        }
        guard let hit = cache.lookup(key) else { return nil }
        guard let file = openFiles.file(key.hex, path: hit.path) else {
            cache.forget(key)
            return nil
        }
        metrics.hit()
        var h = headers
        h.append("Content-Type", hit.format.mimeType)
        h.append("X-Cache", "HIT")
        // A small result held in memory goes out with its head in one write.
        let body: HTTPResponse.Body =
            if let bytes = file.contents, Int64(bytes.count) == hit.size { .bytes(bytes) } else {
                .file(file, offset: 0, length: hit.size)
            }
        return .respond(HTTPResponse(status: 200, headers: h, body: body, logNote: "cache=HIT"))
    }

    private func commonHeaders(_ key: CacheKey, auto: Bool) -> HTTPHeaders {
        var h = HTTPHeaders([
            ("ETag", key.etag), ("Cache-Control", "public, max-age=\(config.http.maxAgeSeconds), immutable"),
        ])
        if auto { h.append("Vary", "Accept") }
        return h
    }

    /// If-None-Match: `*` or a list of entity tags, compared weakly (RFC 9110 §13.1.2).
    static func matches(_ values: [String], _ key: CacheKey) -> Bool {
        for v in values {
            for tag in v.split(separator: ",") {
                var t = tag.trimmingCharacters(in: .whitespaces)
                if t == "*" { return true }
                if t.hasPrefix("W/") { t = String(t.dropFirst(2)) }
                if t == key.etag { return true }
            }
        }
        return false
    }

    static func error(_ e: AspectError) -> HTTPResponse {
        // 500s say no more than that; the log has the rest.
        let message = e.code == .internalError ? "an internal error occurred" : e.message
        return .error(e.code.status, code: e.code.rawValue, message: message)
    }
}

/// A miss, on a worker: render once per key however many ask, store, answer.
struct RenderJob: Sendable {
    let root: ImageRoot
    let source: ImageRoot.Source
    let request: ThumbRequest
    let accept: String?
    let key: CacheKey
    let headers: HTTPHeaders
    let limits: RequestLimits
    let thumbnailer: Thumbnailer
    let cache: DiskCache
    let metrics: Metrics
    let coalescer: Coalescer<Result<ServiceHandler.Rendered, ImagingError>>

    func run() -> HTTPResponse {
        let (result, coalesced) = coalescer.run(key.hex) { () -> Result<ServiceHandler.Rendered, ImagingError> in
            // A render for this key may have finished while this job waited in the queue.
            if let hit = cache.lookup(key), let bytes = FileManager.default.contents(atPath: hit.path) {
                return .success(ServiceHandler.Rendered(bytes: Array(bytes), format: hit.format))
            }
            let start = DispatchTime.now().uptimeNanoseconds
            do throws(ImagingError) {
                let file: SourceFile
                switch root.open(source, src: request.src) {
                case .success(let f): file = f
                case .failure(let e): throw ImagingError(.open, e)
                }
                let r = try thumbnailer.thumbnail(file: file, request: request, requestLimits: limits, accept: accept)
                metrics.rendered(seconds: Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                cache.store(key, r.bytes, format: r.format)
                return .success(ServiceHandler.Rendered(bytes: r.bytes, format: r.format))
            } catch {
                return .failure(error)
            }
        }
        if coalesced { metrics.coalesced() }
        switch result {
        case .success(let r):
            var h = headers
            h.append("Content-Type", r.format.mimeType)
            h.append("X-Cache", "MISS")
            return HTTPResponse(
                status: 200, headers: h, body: .bytes(r.bytes),
                logNote: coalesced ? "cache=MISS coalesced" : "cache=MISS")
        case .failure(let error):
            var r = ServiceHandler.error(error.error)
            if !error.detail.isEmpty { r.logNote = "error=\(error.stage.rawValue): \(error.detail)" }
            return r
        }
    }
}
