import Core
import Foundation
import HTTP
import Hashing
import Stores
import Workers

// From a checked request to an answer: the source's identity (fetched when remote), the
// key, a hit or a 304, else a render job.
extension ServiceHandler {
    /// Whether a memo entry's source may still be served: the source store says nothing
    /// changed since it was last found current, or it is found current now.
    func isCurrent(_ known: RecentKeys.Entry) -> Bool {
        let stamp = sources.changeStamp()
        if let stamp, known.stamp == stamp { return true }
        guard sources.isCurrent(known.identity) else { return false }
        if let stamp { known.stamp = stamp }
        return true
    }

    /// The source's identity: known, or fetched first; with `images.fallback`, its image in
    /// place of a missing or undecodable source.
    func resolving(_ known: CheckedRequest) -> Route {
        guard let fallback, !known.isFallback, known.endpoint == .thumb else { return resolvingSource(known) }
        return withFallback(resolvingSource(known), known, fallback)
    }

    func resolvingSource(_ known: CheckedRequest) -> Route {
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
        /// A dialect's URL: how its request is settled by the source's header (`settling`).
        var settle: Settle?
        /// The same URL's request as settled before, and on which version of the source.
        var settledBefore: (request: ThumbRequest, identity: SourceIdentity)?
        /// The fallback image's request, standing in for a missing source.
        var isFallback = false
    }

    /// The source is remote and not known current: fetched (or revalidated) on a fetch
    /// thread, then served from the result store or handed to the image workers.
    func fetching(_ known: CheckedRequest) -> Route {
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
    func settling(_ known: CheckedRequest, _ identity: SourceIdentity) -> Route {
        guard known.endpoint == .thumb, known.parsed.needsSource else {
            return identified(known, identity)
        }
        if let before = known.settledBefore, before.identity == identity {
            var settled = known
            settled.parsed = before.request
            return identified(settled, identity)
        }
        let (sources, renderer, limits) = (sources, renderer, limits)
        return .work {
            var settled = known
            do throws(ServiceFailure) {
                let file = try sources.open(identity).get()
                let header = try renderer.header(file, reading: known.parsed.reading)
                if let settle = known.settle {
                    settled.parsed = settle(known.parsed, header, limits)
                } else {
                    settled.parsed.note(header)
                }
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
    func identified(_ known: CheckedRequest, _ identity: SourceIdentity) -> Route {
        if known.endpoint == .storyboard { return storyboardIndex(known, identity) }
        let parsed = known.parsed
        if known.endpoint == .thumb, let format = parsed.sourceFormat, parsed.answersSource(format: format) {
            return sourceAnswer(known, identity, format: format)
        }
        // For auto, what varies with the client is whether WebP is acceptable; for best,
        // which of the formats it weighs the client takes.
        var formatTag =
            switch parsed.format {
            case .auto: known.memoKey.autoTag
            // best falls back to auto (a q, a large output, …): auto's tag too.
            case .best: AcceptHeader.bestTag(known.accept, formats: limits.bestFormats) + "/" + known.memoKey.autoTag
            default: parsed.format.rawValue
            }
        var canonical = parsed.canonical
        var auto = parsed.format.variesWithAccept
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
        if parsed.reading.faces, !config.faces.upsample { rendering += " faces=once" }
        // AVIF's effort changes an AVIF's bytes: part of the key of whatever may be AVIF.
        if formatTag.contains("avif") { rendering += " avif-effort=\(config.output.avifEffort)" }
        var thumbRendering = rendering
        if parsed.searchesQuality(limits) || parsed.format == .best {
            thumbRendering += " " + limits.autoQuality.description
        }
        // What best weighs and where it stops are part of what it chose.
        if parsed.format == .best {
            thumbRendering +=
                " best=" + limits.bestFormats.map(\.rawValue).joined(separator: ",") + "/\(limits.bestMaxPixels)"
        }
        let key = CacheKey(
            canonical: canonical, source: identity, format: formatTag,
            rendering: known.endpoint == .thumb || (parsed.format == .best && known.wantsOutput)
                ? thumbRendering : rendering)
        let image = known.endpoint == .thumb
        var common = commonHeaders(
            key, auto: auto, hints: config.http.clientHints && image, saveData: config.http.saveData && image,
            weak: !image)
        // One tag per source (SPEC: Shared results and purging), for a CDN's purge by tag.
        let tag = Self.sourceTag(parsed.src)
        common.append("Surrogate-Key", tag)
        common.append("Cache-Tag", tag)
        let headers = AnswerHeaders(common: common, disposition: known.disposition)
        recent.set(
            known.memoKey,
            RecentKeys.Entry(
                identity: identity, key: key, headers: headers, settled: known.settle != nil ? parsed : nil))
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
        var job = RenderJob(
            identity: identity, request: parsed, accept: known.accept, key: key, infoKey: infoKey, headers: headers,
            limits: limits, sources: sources, results: results, renderer: renderer, metrics: metrics,
            coalescer: coalescer, info: known.endpoint == .info ? InfoOptions(wantsOutput: known.wantsOutput) : nil)
        if known.endpoint == .info, known.wantsOutput, parsed.format == .best {
            job.bestKey = CacheKey(
                canonical: parsed.canonical, source: identity, format: formatTag, rendering: thumbRendering)
        }
        return .work { [job] in job.run() }
    }

    /// A 304 for a matching If-None-Match, or the stored result; nil on a miss.
    func serveCached(_ request: HTTPRequestHead, key: CacheKey, headers: AnswerHeaders) -> Route? {
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
    func commonHeaders(
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
    public static func sourceTag(_ src: String) -> String { "src-" + SourceHash.of(src) }

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
}
