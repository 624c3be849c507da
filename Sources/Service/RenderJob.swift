import Core
import HTTP
import Stores
import Syscalls
import Workers

/// A miss, on a worker: render once per key however many ask, store, answer.
struct RenderJob: Sendable {
    let identity: SourceIdentity
    let request: ThumbRequest
    let accept: String?
    let key: CacheKey
    /// Where `/info`'s answer goes when the render gives its facts; nil: not wanted.
    let infoKey: CacheKey?
    /// For `/info` of a `format=best` output: the key its `/thumb` is kept under, whose
    /// kind says the choice once made.
    var bestKey: CacheKey? = nil
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
                        bytes: bytes, contentType: hit.contentType, quality: ResultKind.quality(hit.kind),
                        chosen: ResultKind.chosen(hit.kind)))
            }
            // Another replica may have made it: the shared tier, if there is one.
            if let hit = results.sharedResult(key.hex, source: request.src), let bytes = hit.bytes {
                return .success(
                    ServiceHandler.Rendered(
                        bytes: bytes, contentType: hit.contentType, quality: ResultKind.quality(hit.kind),
                        chosen: ResultKind.chosen(hit.kind), cache: "HIT"))
            }
            let start = Clock.now()
            do throws(ServiceFailure) {
                let file = try sources.open(identity).get()
                if let info {
                    let facts = try renderer.describe(file, reading: request.reading)
                    let made = bestKey.flatMap { results.result($0.hex) }
                    let chosen = made.flatMap { m in ResultKind.chosen(m.kind).map { ($0, ResultKind.quality(m.kind)) }
                    }
                    var undecided = false
                    let json = try InfoDocument.make(
                        facts, request: request, limits: limits, accept: accept, withOutput: info.wantsOutput,
                        chosen: chosen, undecided: &undecided)
                    // Not kept while best's choice is not made: the next /info says it.
                    if !undecided { results.keep(key.hex, json, kind: ResultKind.info, source: request.src) }
                    return .success(
                        ServiceHandler.Rendered(
                            bytes: json, contentType: ResultKind.contentType(ResultKind.info), undecided: undecided))
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
                if let chosen = r.chosen { metrics.bestChosen(chosen) }
                results.keep(
                    key.hex, r.bytes, kind: ResultKind.image(r.format, quality: r.quality, chosen: r.chosen),
                    source: request.src)
                return .success(
                    ServiceHandler.Rendered(
                        bytes: r.bytes, contentType: r.format.mimeType, quality: r.quality, chosen: r.chosen))
            } catch {
                return .failure(error)
            }
        }
        if coalesced { metrics.coalesced() }
        switch result {
        case .success(let r):
            var fields = headers.complete(
                contentType: r.contentType, cache: r.cache, quality: r.quality, chosen: r.chosen)
            if r.undecided {
                fields = HTTPHeaders(fields.fields.filter { $0.name != "ETag" })
                fields.set("Cache-Control", "no-cache")
            }
            return HTTPResponse(
                status: 200, headers: fields, body: .bytes(r.bytes),
                logNote: r.cache == "HIT" ? "cache=HIT shared" : coalesced ? "cache=MISS coalesced" : "cache=MISS")
        case .failure(let failure):
            return ServiceHandler.error(failure)
        }
    }
}
