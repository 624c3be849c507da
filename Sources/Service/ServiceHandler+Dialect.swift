import Core
import HTTP

// What both URL dialects (imgproxy's and thumbor's) do around their own parsing: the
// memo of a URL already keyed, and the native flow once the URL is read.
extension ServiceHandler {
    /// How a dialect settles its request by the source's header: the format it keeps
    /// where the URL names none, and the native request where the native parameters say
    /// its geometry on this source (then the two share a cache entry and ETag).
    typealias Settle = @Sendable (ThumbRequest, SourceDescription, RequestLimits) -> ThumbRequest

    /// The memo's key for a dialect URL (`dialect` keeps the two apart), and the cached
    /// answer when the URL was keyed before and its source has not changed.
    func dialectMemo(_ request: HTTPRequestHead, dialect: String) -> (key: RecentKeys.Target, served: Route?) {
        let accept = request.headers["Accept"]
        let memoKey = RecentKeys.Target(
            query: dialect + "\u{0}" + request.rawPath,
            autoTag: AcceptHeader.autoTag(accept, autoAvif: config.http.autoAvif, autoJxl: config.http.autoJxl),
            bestTag: bestTag(accept, mayBeBest: request.rawPath.contains("best") || request.rawPath.contains("%")))
        if let known = recent.get(memoKey), isCurrent(known) {
            return (memoKey, serveCached(request, key: known.key, headers: known.headers))
        }
        return (memoKey, nil)
    }

    /// A dialect URL read into `parsed`: the native flow, its request settled by the
    /// source's header (or as it was settled before on this version of the source).
    func dialectFlow(
        _ request: HTTPRequestHead, _ parsed: ThumbRequest, settle: @escaping Settle, memoKey: RecentKeys.Target,
        disposition: Disposition? = nil
    ) -> Route {
        var known = CheckedRequest(
            request: request, parsed: parsed, memoKey: memoKey, accept: request.headers["Accept"],
            endpoint: .thumb, wantsOutput: false)
        known.disposition = disposition
        known.settle = settle
        if let prior = recent.get(memoKey), let settled = prior.settled {
            known.settledBefore = (settled, prior.identity)
        }
        return resolving(known)
    }
}
