import Configuration
import Core
import Foundation
import HTTP
import Hashing
import Signing
import Stores
import Synchronization
import Syscalls
import Workers

/// The service's routes: `/thumb`, `/healthz`, `/readyz`, `/metrics`, and the demo page
/// `/`. It owns the flow of `/thumb` (parse, check the signature, the source's identity,
/// the key, the result store, the plan, the render) and knows its sources, its result
/// store and its renderer only by protocol.
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
    /// The page at `/` when `http.demoPage` is on; it runs on a worker.
    let demoPage: (@Sendable () -> HTTPResponse)?
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

    public init(
        config: Config, sources: any SourceStore, results: any ResultStore, renderer: any Renderer,
        signer: Signer?, demoPage: (@Sendable () -> HTTPResponse)? = nil
    ) {
        self.config = config
        limits = config.requestLimits
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
                            server: context.server.snapshot),
                        contentType: "text/plain; version=0.0.4; charset=utf-8")))
        case "/thumb":
            return counted(.thumb, thumb(request, .thumb))
        case "/info":
            return counted(.info, thumb(request, .info))
        case "/" where demoPage != nil:
            // It reads the images' headers: work for the pool, not the loop.
            guard let demoPage else { break }
            return counted(.demo, .work(demoPage))
        default:
            if config.imgproxy.enabled, request.path.utf8.count > 1 {
                return counted(.imgproxy, imgproxy(request))
            }
        }
        return counted(
            .other, .respond(Self.error(AspectError(.notFound, "no such route: \(request.path); try /thumb?src=…"))))
    }

    /// `POST /purge?src=PATH` (SPEC: Shared results and purging): every cached variant of
    /// the source (results and `/info` answers) and the source cache's copy removed, on a
    /// worker; `{"purged": N}`. Only with `Authorization: Bearer` and `security.adminToken`
    /// (constant-time); another method is a 405.
    private func purge(_ request: HTTPRequestHead) -> Route {
        guard request.method == "POST" else {
            var r = HTTPResponse.error(
                405, code: AspectError.Code.methodNotAllowed.rawValue,
                message: "\(request.method) is not allowed on /purge; use POST")
            r.headers.append("Allow", "POST")
            return .respond(r)
        }
        let given = request.headers["Authorization"] ?? ""
        let expected = "Bearer " + config.security.adminToken
        guard Signer.same(given, expected) else {
            var r = Self.error(
                AspectError(.unauthorized, "POST /purge needs Authorization: Bearer and the admin token"))
            r.headers.append("WWW-Authenticate", "Bearer")
            return .respond(r)
        }
        let src: String
        do throws(AspectError) {
            let params = try QueryParameters.decode(request.query)
            guard params.pairs.count == 1, let only = params.pairs.first, only.name == "src", !only.value.isEmpty else {
                throw AspectError(.badParam, "POST /purge takes src=PATH and nothing else")
            }
            try ThumbRequest.checkSourcePath(only.value)
            src = only.value
        } catch {
            return .respond(Self.error(error))
        }
        let (results, sources, metrics) = (results, sources, metrics)
        return .work {
            let n = results.purge(source: src).count
            _ = sources.purge(src)
            metrics.purge(variants: n)
            return .text(200, "{\"purged\": \(n)}\n", contentType: "application/json")
        }
    }

    /// Counts the answer by route and status, now or when it is given.
    private func counted(_ route: Metrics.RouteLabel, _ r: Route) -> Route {
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
    private func readiness(_ context: RequestContext) -> HTTPResponse {
        if context.draining { return .text(503, "draining\n") }
        if let problem = sources.readinessProblem() { return .text(503, "not ready: \(problem)\n") }
        if let problem = results.problem ?? sources.cacheProblem {
            return .text(200, "ready, serving uncached: \(problem)\n")
        }
        return .text(200, "ready\n")
    }

    // MARK: /thumb

    /// The two endpoints that answer from a source: `/thumb` renders it, `/info` describes it.
    enum Endpoint: String, Sendable {
        case thumb = "/thumb"
        case info = "/info"
    }

    /// `/thumb` or `/info`: the same parsing, signature (over the endpoint's path),
    /// source identity and result store; then a render or a description.
    private func thumb(_ request: HTTPRequestHead, _ endpoint: Endpoint) -> Route {
        let accept = request.headers["Accept"]
        let autoTag = AcceptHeader.autoTag(accept, autoAvif: config.http.autoAvif, autoJxl: config.http.autoJxl)
        let hints = config.http.clientHints ? ClientHints(request.headers) : nil
        let saveData =
            config.http.saveData
            && request.headers["Save-Data"]?.trimmingCharacters(in: .whitespaces).lowercased() == "on"
        var memoQuery = endpoint == .thumb ? request.query : "/info?" + request.query
        if let hints, !hints.memo.isEmpty { memoQuery += hints.memo }
        if saveData { memoQuery += "\u{0}save-data" }
        let memoKey = RecentKeys.Target(query: memoQuery, autoTag: autoTag)
        if let known = recent.get(memoKey), isCurrent(known),
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
            guard signer.verify(sig, path: endpoint.rawValue, params) else {
                return .respond(Self.error(AspectError(.badSignature, "sig does not match this request")))
            }
        }
        // The signature covers the request as sent (preset= included); then the preset's
        // parameters stand in for its name, the request's own winning.
        var parsed: ThumbRequest
        let expanded: QueryParameters
        do throws(AspectError) {
            expanded = try config.parsedPresets.expand(params, onlyPresets: config.security.onlyPresets)
            parsed = try ThumbRequest.parse(expanded, limits: limits)
        } catch {
            return .respond(Self.error(error))
        }
        if let hints {
            parsed = hints.apply(
                to: parsed, given: Set(expanded.pairs.map(\.name)), limits: limits)
        }
        // Save-Data asks for fewer bytes; an explicit q still wins.
        if saveData, parsed.quality == nil, !parsed.autoQuality, endpoint == .thumb { parsed.saveData = true }
        // /info gives `output` when any /thumb parameter is there besides src.
        let wantsOutput = expanded.pairs.contains { $0.name != "src" && $0.name != "sig" }
        return resolving(
            CheckedRequest(
                request: request, parsed: parsed, memoKey: memoKey, accept: accept, endpoint: endpoint,
                wantsOutput: wantsOutput))
    }

    /// imgproxy's URL format (SPEC: imgproxy URLs): its signature over the path, its
    /// options parsed into the native request, then the native flow (one cache entry with
    /// the native request that means the same).
    private func imgproxy(_ request: HTTPRequestHead) -> Route {
        let accept = request.headers["Accept"]
        let memoKey = RecentKeys.Target(
            query: "imgproxy\u{0}" + request.rawPath,
            autoTag: AcceptHeader.autoTag(accept, autoAvif: config.http.autoAvif, autoJxl: config.http.autoJxl))
        if let known = recent.get(memoKey), isCurrent(known),
            let served = serveCached(request, key: known.key, headers: known.headers)
        {
            return served
        }
        let url: ImgproxyURL
        do throws(AspectError) {
            // Signed as sent (escapes kept), as imgproxy signs it; or as imgproxy reads it
            // after undoing what proxies do to a URL (`%3A` in the options).
            let (signature, path) = try ImgproxyURL.split(request.rawPath)
            if let imgproxySigner {
                guard
                    imgproxySigner.verify(signature, path: path)
                        || imgproxySigner.verify(signature, path: ImgproxyURL.redenormalized(path))
                else {
                    throw AspectError(.badSignature, "the imgproxy signature does not match this URL")
                }
            } else if signer != nil {
                throw AspectError(
                    .badSignature,
                    "imgproxy URLs need imgproxy.key and imgproxy.salt on a server that signs its URLs")
            }
            url = try ImgproxyURL.parse(
                path: request.rawPath, settings: imgproxySettings, limits: limits,
                now: Int64(Date().timeIntervalSince1970))
        } catch {
            return .respond(Self.error(error))
        }
        var known = CheckedRequest(
            request: request, parsed: url.request, memoKey: memoKey, accept: accept, endpoint: .thumb,
            wantsOutput: false)
        known.disposition = Disposition(
            stem: url.filename ?? Disposition.stem(of: url.request.src), attachment: url.attachment)
        return resolving(known)
    }

    /// Whether a memo entry's source may still be served: the source store says nothing
    /// changed since it was last found current, or it is found current now.
    private func isCurrent(_ known: RecentKeys.Entry) -> Bool {
        let stamp = sources.changeStamp()
        if let stamp, known.stamp == stamp { return true }
        guard sources.isCurrent(known.identity) else { return false }
        if let stamp { known.stamp = stamp }
        return true
    }

    /// The source's identity: known, or fetched first.
    private func resolving(_ known: CheckedRequest) -> Route {
        let parsed = known.parsed
        switch sources.resolve(parsed.src) {
        case .failed(let failure):
            return .respond(Self.error(failure))
        case .ready(let identity), .stale(let identity):
            if countsSourceCache { metrics.sourceCache(hit: true) }
            return settling(known, identity)
        case .needsFetch:
            if countsSourceCache { metrics.sourceCache(hit: false) }
            return fetching(known)
        }
    }

    /// A request parsed and checked, on its way to a source identity.
    struct CheckedRequest: Sendable {
        var request: HTTPRequestHead
        var parsed: ThumbRequest
        var memoKey: RecentKeys.Target
        var accept: String?
        var endpoint: Endpoint
        var wantsOutput: Bool
        /// imgproxy URLs: what `Content-Disposition` says.
        var disposition: Disposition?
    }

    /// The source is remote and not known current: fetched (or revalidated) on a fetch
    /// thread, then served from the result store or handed to the image workers.
    private func fetching(_ known: CheckedRequest) -> Route {
        let (sources, fetches, metrics) = (sources, fetches, metrics)
        return .deferred { responder in
            let queued = fetches.submit {
                // A client that left while this waited is owed nothing: the slot goes to
                // the next fetch (a stalled origin must not hold slots for nobody).
                if responder.clientGone {
                    metrics.fetchAbandoned()
                    return
                }
                // Fetched by another request while this one waited (five sizes of one new
                // source): no second download.
                let fetched: Result<SourceIdentity, ServiceFailure>
                switch sources.resolve(known.parsed.src) {
                case .ready(let identity), .stale(let identity): fetched = .success(identity)
                case .needsFetch, .failed: fetched = sources.fetch(known.parsed.src)
                }
                switch fetched {
                case .failure(let failure):
                    responder.respond(Self.error(failure))
                case .success(let identity):
                    switch settling(known, identity) {
                    case .respond(let r): responder.respond(r)
                    case .work(let job): responder.work(job)
                    case .deferred(let start): start(responder)
                    }
                }
            }
            if !queued {
                // sources.queueDepth fetches waiting already: the same 503 as a full image queue.
                responder.respond(.error(.queueFull(retryAfter: 1)))
            }
        }
    }

    /// An imgproxy URL whose format or geometry depends on the source (SPEC: imgproxy
    /// URLs): its header read on a worker first, the request settled by it (the source's
    /// format kept, the native request where it means the same on this source), then keyed.
    /// The memo then holds the key, so the header is read once per URL, not per hit.
    private func settling(_ known: CheckedRequest, _ identity: SourceIdentity) -> Route {
        guard known.endpoint == .thumb, ImgproxyURL.needsSource(known.parsed) else {
            return identified(known, identity)
        }
        let (sources, renderer, limits) = (sources, renderer, limits)
        return .work {
            var settled = known
            do throws(ServiceFailure) {
                let file = try sources.open(identity).get()
                let header = try renderer.header(file, reading: known.parsed.reading)
                settled.parsed = ImgproxyURL.settle(known.parsed, source: header, limits: limits)
            } catch {
                return Self.error(error)
            }
            switch self.identified(settled, identity) {
            case .respond(let r): return r
            case .work(let job): return job()
            case .deferred:
                return Self.error(AspectError(.internalError, "a settled request was deferred"))
            }
        }
    }

    /// The key for this version of the source: a hit, a 304, or a render.
    private func identified(_ known: CheckedRequest, _ identity: SourceIdentity) -> Route {
        let parsed = known.parsed
        // For auto, what varies with the client is whether WebP is acceptable.
        var formatTag =
            parsed.format == .auto ? known.memoKey.autoTag : parsed.format.rawValue
        var canonical = parsed.canonical
        var auto = parsed.format == .auto
        if known.endpoint == .info {
            // Another entry than any /thumb's; its output's format only when it has one.
            canonical = "/info?" + canonical
            if !known.wantsOutput {
                formatTag = "info"
                auto = false
            }
        }
        // A watermark's pixels are part of what is rendered: a changed file, another key;
        // so are q=auto's settings where the quality is searched.
        var rendering = config.images.renderingTag
        if let mark = parsed.watermark.flatMap({ config.watermarks[$0] }) { rendering += " watermark=" + mark.digest }
        if known.endpoint == .thumb, parsed.searchesQuality(limits) {
            rendering += " " + limits.autoQuality.description
        }
        let key = CacheKey(canonical: canonical, source: identity, format: formatTag, rendering: rendering)
        let image = known.endpoint == .thumb
        var common = commonHeaders(
            key, auto: auto, hints: config.http.clientHints && image, saveData: config.http.saveData && image,
            weak: !image)
        // One tag per source (SPEC: Shared results and purging), for a CDN's purge by tag.
        let tag = Self.sourceTag(parsed.src)
        common.append("Surrogate-Key", tag)
        common.append("Cache-Tag", tag)
        let headers = AnswerHeaders(common: common, disposition: known.disposition)
        recent.set(known.memoKey, RecentKeys.Entry(identity: identity, key: key, headers: headers))
        if let served = serveCached(known.request, key: key, headers: headers) { return served }
        metrics.miss()
        // A /thumb render of a whole still source can make /info's answer too, from the
        // same decode: the key it would have, when it is not stored yet.
        var infoKey: CacheKey?
        if image, parsed.trim == nil, parsed.page == 1, parsed.autoRotate {
            let info = ThumbRequest(src: parsed.src)
            let k = CacheKey(
                canonical: "/info?" + info.canonical, source: identity, format: "info",
                rendering: config.images.renderingTag)
            if results.result(k.hex) == nil { infoKey = k }
        }
        let job = RenderJob(
            identity: identity, request: parsed, accept: known.accept, key: key, infoKey: infoKey, headers: headers,
            limits: limits, sources: sources, results: results, renderer: renderer, metrics: metrics,
            coalescer: coalescer, info: known.endpoint == .info ? InfoOptions(wantsOutput: known.wantsOutput) : nil)
        return .work { job.run() }
    }

    /// A 304 for a matching If-None-Match, or the stored result; nil on a miss.
    private func serveCached(_ request: HTTPRequestHead, key: CacheKey, headers: AnswerHeaders) -> Route? {
        // Renders are deterministic, so a client holding this ETag holds these bytes,
        // whether or not the store still has them.
        if Self.matches(request.headers.values("If-None-Match"), key) {
            return .respond(HTTPResponse(status: 304, headers: headers.common, logNote: "cache=HIT"))
        }
        guard let hit = results.result(key.hex) else { return nil }
        let file = hit.body
        metrics.hit()
        let h = headers.hit(kind: hit.kind)
        // A small result held in memory goes out with its head in one write.
        let body: HTTPResponse.Body =
            if let bytes = file.contents, Int64(bytes.count) == hit.size { .bytes(bytes) } else {
                .file(file, offset: 0, length: hit.size)
            }
        return .respond(HTTPResponse(status: 200, headers: h, body: body, logNote: "cache=HIT"))
    }

    /// `hints`: an image answer under `http.clientHints`, which asks for them and varies
    /// on them (one made without a hint too, or a cache would hand it to a 2× screen).
    /// `saveData`: an image answer under `http.saveData`, which varies on `Save-Data`.
    /// `weak`: an `/info` answer, whose placeholders may come from `/info`'s own decode or
    /// from a `/thumb` render's (SPEC: Efficiency): the same facts, not always the same bytes.
    private func commonHeaders(
        _ key: CacheKey, auto: Bool, hints: Bool = false, saveData: Bool = false, weak: Bool = false
    ) -> HTTPHeaders {
        var h = HTTPHeaders([
            ("ETag", weak ? "W/" + key.etag : key.etag),
            ("Cache-Control", "public, max-age=\(config.http.maxAgeSeconds), immutable"),
        ])
        let vary = (auto ? ["Accept"] : []) + (hints ? [ClientHints.vary] : []) + (saveData ? ["Save-Data"] : [])
        if !vary.isEmpty { h.append("Vary", vary.joined(separator: ", ")) }
        if hints { h.append("Accept-CH", ClientHints.acceptCH) }
        return h
    }

    /// A source's CDN tag: `src-` and the first 16 hex digits of SHA-256 of `src`.
    public static func sourceTag(_ src: String) -> String { "src-" + SHA256.hex(src).prefix(16) }

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

    public static func error(_ e: AspectError) -> HTTPResponse {
        // 500s say no more than that; the log has the rest.
        let message = e.code == .internalError ? "an internal error occurred" : e.message
        return .error(e.code.status, code: e.code.rawValue, message: message)
    }

    /// The public error, with the rest for the access log's note.
    static func error(_ failure: ServiceFailure) -> HTTPResponse {
        var r = error(failure.error)
        if !failure.detail.isEmpty { r.logNote = "error=\(failure.stage): \(failure.detail)" }
        return r
    }
}

/// A miss, on a worker: render once per key however many ask, store, answer.
struct RenderJob: Sendable {
    let identity: SourceIdentity
    let request: ThumbRequest
    let accept: String?
    let key: CacheKey
    /// Where `/info`'s answer goes when the render gives its facts; nil: not wanted.
    let infoKey: CacheKey?
    let headers: AnswerHeaders
    let limits: RequestLimits
    let sources: any SourceStore
    let results: any ResultStore
    let renderer: any Renderer
    let metrics: Metrics
    let coalescer: Coalescer<Result<ServiceHandler.Rendered, ServiceFailure>>
    /// Set for `/info`: describe rather than render.
    let info: InfoOptions?

    func run() -> HTTPResponse {
        let (result, coalesced) = coalescer.run(key.hex) { () -> Result<ServiceHandler.Rendered, ServiceFailure> in
            // A render for this key may have finished while this job waited in the queue.
            if let hit = results.result(key.hex), let bytes = hit.bytes {
                return .success(
                    ServiceHandler.Rendered(
                        bytes: bytes, contentType: hit.contentType, quality: ResultKind.quality(hit.kind)))
            }
            // Another replica may have made it: the shared tier, if there is one.
            if let hit = results.sharedResult(key.hex, source: request.src), let bytes = hit.bytes {
                return .success(
                    ServiceHandler.Rendered(
                        bytes: bytes, contentType: hit.contentType, quality: ResultKind.quality(hit.kind),
                        cache: "HIT"))
            }
            let start = Clock.now()
            do throws(ServiceFailure) {
                let file = try sources.open(identity).get()
                if let info {
                    let facts = try renderer.describe(file, reading: request.reading)
                    let json = try InfoDocument.make(
                        facts, request: request, limits: limits, accept: accept, withOutput: info.wantsOutput)
                    results.keep(key.hex, json, kind: ResultKind.info, source: request.src)
                    return .success(
                        ServiceHandler.Rendered(bytes: json, contentType: ResultKind.contentType(ResultKind.info)))
                }
                let (request, limits, accept) = (request, limits, accept)
                let r = try renderer.render(file, reading: request.reading, wantFacts: infoKey != nil) {
                    source throws(AspectError) in
                    try RenderOrder.plan(request, source: source, limits: limits, accept: accept)
                }
                metrics.rendered(seconds: Double(Clock.now() - start) / 1e9)
                if let infoKey, let facts = r.facts {
                    if let json = try? InfoDocument.make(
                        facts, request: ThumbRequest(src: request.src), limits: limits, accept: nil, withOutput: false)
                    {
                        results.keep(infoKey.hex, json, kind: ResultKind.info, source: request.src)
                    }
                }
                results.keep(
                    key.hex, r.bytes, kind: ResultKind.image(r.format, quality: r.quality), source: request.src)
                return .success(
                    ServiceHandler.Rendered(bytes: r.bytes, contentType: r.format.mimeType, quality: r.quality))
            } catch {
                return .failure(error)
            }
        }
        if coalesced { metrics.coalesced() }
        switch result {
        case .success(let r):
            return HTTPResponse(
                status: 200, headers: headers.complete(contentType: r.contentType, cache: r.cache, quality: r.quality),
                body: .bytes(r.bytes),
                logNote: r.cache == "HIT" ? "cache=HIT shared" : coalesced ? "cache=MISS coalesced" : "cache=MISS")
        case .failure(let failure):
            return ServiceHandler.error(failure)
        }
    }
}

/// The headers of an answer before its content type is known: the common ones, and for
/// an imgproxy URL the disposition, whose extension is the content type's (made once per
/// format here, on the way to the memo, not on every hit).
struct AnswerHeaders: Sendable {
    let common: HTTPHeaders
    /// `Content-Disposition` by content type.
    let dispositions: [(contentType: String, value: String)]
    /// The last hit's fields, by the kind of result they were made for: one entry's
    /// results are all of one kind, so a hit's fields are made (and put in their wire
    /// form) once, not on every hit.
    private let hits = HitFields()

    final class HitFields: Sendable {
        let last = Mutex<(kind: String, headers: HTTPHeaders)?>(nil)
    }

    init(common: HTTPHeaders, disposition: Disposition?) {
        self.common = common
        dispositions =
            disposition.map { d in ImageFormat.allCases.map { ($0.mimeType, d.value(contentType: $0.mimeType)) } }
            ?? []
    }

    /// A hit's fields for a result of `kind` (`ResultKind`).
    func hit(kind: String) -> HTTPHeaders {
        if let made = hits.last.withLock({ $0 }), made.kind == kind { return made.headers }
        let h = complete(contentType: ResultKind.contentType(kind), cache: "HIT", quality: ResultKind.quality(kind))
            .prepared()
        hits.last.withLock { $0 = (kind, h) }
        return h
    }

    func complete(contentType: String, cache: String, quality: Int? = nil) -> HTTPHeaders {
        var h = common
        h.append("Content-Type", contentType)
        h.append("X-Cache", cache)
        if let quality { h.append("X-Quality", String(quality)) }
        if let d = dispositions.first(where: { $0.contentType == contentType }) {
            h.append("Content-Disposition", d.value)
        }
        return h
    }
}

/// `Content-Disposition` as imgproxy writes it (`httpheaders/cdv.go`): `inline` or
/// `attachment`, and a file name of the source's stem (or `filename`) and the result's
/// extension, with `"` escaped as `%22`.
struct Disposition: Sendable, Equatable {
    var stem: String
    var attachment: Bool

    /// The last segment of `src` without its extension; `image` when nothing is left.
    static func stem(of src: String) -> String {
        let name = src.split(separator: "/").last.map(String.init) ?? ""
        let stem = name.lastIndex(of: ".").map { String(name[..<$0]) } ?? name
        return stem.isEmpty ? "image" : stem
    }

    func value(contentType: String) -> String {
        let ext = ImageFormat.allCases.first { $0.mimeType == contentType }.map { "." + $0.fileExtension } ?? ""
        let name = stem.replacingOccurrences(of: "\"", with: "%22")
        return "\(attachment ? "attachment" : "inline"); filename=\"\(name)\(ext)\""
    }
}
