import Core
import Foundation
import HTTP

// The fallback image (SPEC: imgproxy URLs; imgproxy's IMGPROXY_FALLBACK_IMAGE_*): a missing
// source, or one that cannot be decoded, answered with a configured image instead.
extension ServiceHandler {
    /// What `images.fallback` configures: the source to show instead (a path under the
    /// root, or the reserved name of the configured data), the status it is answered with
    /// (0: the error's own), and its `max-age`.
    public struct Fallback: Sendable {
        public var src: String
        public var status: Int
        public var maxAgeSeconds: Int

        public init(src: String, status: Int, maxAgeSeconds: Int) {
            (self.src, self.status, self.maxAgeSeconds) = (src, status, maxAgeSeconds)
        }
    }

    /// The errors the fallback stands in for: no such source, one that cannot be decoded,
    /// and a decoder that crashed on it.
    static let fallbackCodes: Set<String> = [
        AspectError.Code.notFound.rawValue, AspectError.Code.unsupportedSource.rawValue,
        AspectError.Code.decodeCrashed.rawValue,
    ]

    /// `route`, with the fallback image in place of an answer that is one of
    /// `fallbackCodes`, however the route answers (at once, on a worker, deferred).
    func withFallback(_ route: Route, _ known: CheckedRequest, _ f: Fallback) -> Route {
        let needs: @Sendable (HTTPResponse) -> Bool = { r in r.errorCode.map(Self.fallbackCodes.contains) ?? false }
        let answer: @Sendable (HTTPResponse) -> Route = { original in
            var instead = known
            instead.parsed.src = f.src
            instead.isFallback = true
            instead.settledBefore = nil
            instead.memoKey.query += "\u{0}fallback"
            return Self.adjusted(self.resolving(instead), original: original, f, metrics: self.metrics)
        }
        switch route {
        case .respond(let r):
            return needs(r) ? answer(r) : route
        case .work(let job):
            return .work {
                let r = job()
                return needs(r) ? Self.run(answer(r)) : r
            }
        case .deferred(let start):
            return .deferred { responder in
                start(FallbackResponder(base: responder, needs: needs, answer: answer))
            }
        }
    }

    /// The fallback's answers as the client gets them: the configured status (0: the
    /// error's), `X-Fallback: 1`, its own `max-age`; a fallback that fails itself leaves
    /// the original error.
    static func adjusted(_ route: Route, original: HTTPResponse, _ f: Fallback, metrics: Metrics) -> Route {
        let adjust: @Sendable (HTTPResponse) -> HTTPResponse = { r in
            guard r.status == 200 || r.status == 304 else { return original }
            metrics.fallback()
            var out = r
            if r.status == 200 { out.status = f.status == 0 ? original.status : f.status }
            out.headers.set("X-Fallback", "1")
            out.headers.set("Cache-Control", "public, max-age=\(f.maxAgeSeconds)")
            return out
        }
        switch route {
        case .respond(let r): return .respond(adjust(r))
        case .work(let job): return .work { adjust(job()) }
        case .deferred(let start):
            return .deferred { responder in start(MappedResponder(base: responder, map: adjust)) }
        }
    }

    /// A route's answer, here and now, on this thread (the worker that found the error;
    /// `aspect warm --offline`'s).
    public static func run(_ route: Route) -> HTTPResponse {
        switch route {
        case .respond(let r): return r
        case .work(let job): return job()
        case .deferred(let start):
            let waiter = WaitingResponder()
            start(waiter)
            return waiter.wait()
        }
    }
}

/// Passes answers on, the fallback's in place of the errors it stands in for.
struct FallbackResponder: Responder {
    let base: any Responder
    let needs: @Sendable (HTTPResponse) -> Bool
    let answer: @Sendable (HTTPResponse) -> Route

    func respond(_ r: HTTPResponse) {
        guard needs(r) else { return base.respond(r) }
        switch answer(r) {
        case .respond(let instead): base.respond(instead)
        case .work(let job): base.work(job)
        case .deferred(let start): start(base)
        }
    }

    func work(_ job: @escaping @Sendable () -> HTTPResponse) {
        let (needs, answer) = (needs, answer)
        base.work {
            let r = job()
            return needs(r) ? ServiceHandler.run(answer(r)) : r
        }
    }

    var clientGone: Bool { base.clientGone }
}

/// Passes every answer on through `map`.
struct MappedResponder: Responder {
    let base: any Responder
    let map: @Sendable (HTTPResponse) -> HTTPResponse

    func respond(_ r: HTTPResponse) { base.respond(map(r)) }

    func work(_ job: @escaping @Sendable () -> HTTPResponse) {
        let map = map
        base.work { map(job()) }
    }

    var clientGone: Bool { base.clientGone }
}

/// Waits for the one answer of a deferred route; its work runs on the waiting thread
/// (the fallback's, and `aspect warm --offline`'s requests).
public final class WaitingResponder: Responder, @unchecked Sendable {
    /// `@unchecked Sendable`: `response` and `job` are guarded by `done`'s lock.
    private let done = NSCondition()
    private var response: HTTPResponse?
    private var job: (@Sendable () -> HTTPResponse)?

    public init() {}

    public func respond(_ r: HTTPResponse) {
        done.lock()
        response = r
        done.broadcast()
        done.unlock()
    }

    public func work(_ job: @escaping @Sendable () -> HTTPResponse) {
        done.lock()
        self.job = job
        done.broadcast()
        done.unlock()
    }

    public var clientGone: Bool { false }

    public func wait() -> HTTPResponse {
        done.lock()
        while response == nil, job == nil { done.wait() }
        let (r, j) = (response, job)
        done.unlock()
        if let r { return r }
        return j?() ?? .text(500, "no answer")
    }
}
