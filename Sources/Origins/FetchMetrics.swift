import Synchronization

/// What a remote source store counts, for `/metrics`.
public final class FetchMetrics: Sendable {
    /// How a fetch ended.
    public enum Outcome: String, CaseIterable, Sendable {
        /// Downloaded whole.
        case downloaded
        /// A conditional request answered 304: the kept copy is current.
        case notModified = "not_modified"
        case notFound = "not_found"
        case tooLarge = "too_large"
        case timeout
        /// Refused, reset, a 5xx, a 4xx other than 404/410, a redirect not followed.
        case error
    }

    struct Counters {
        var outcomes = [Int](repeating: 0, count: Outcome.allCases.count)
        var bytes: Int64 = 0
        var hits = 0
        var misses = 0
        var inFlight = 0
        var fetchTime = Histogram(bounds: FetchMetrics.bounds)
    }

    /// Fetch-time histogram bounds, in seconds.
    static let bounds: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
    private let counters = Mutex(Counters())

    public init() {}

    /// A request found its source in the source cache, current (no fetch), or not.
    public func sourceCache(hit: Bool) {
        counters.withLock { if hit { $0.hits += 1 } else { $0.misses += 1 } }
    }

    public func started() { counters.withLock { $0.inFlight += 1 } }

    public func finished(_ outcome: Outcome, bytes: Int64, seconds: Double) {
        counters.withLock { c in
            c.inFlight -= 1
            c.outcomes[Outcome.allCases.firstIndex(of: outcome) ?? 0] += 1
            c.bytes += bytes
            c.fetchTime.observe(seconds)
        }
    }

    public var fetches: [Outcome: Int] {
        let c = counters.withLock { $0 }
        var out: [Outcome: Int] = [:]
        for (i, o) in Outcome.allCases.enumerated() { out[o] = c.outcomes[i] }
        return out
    }

    /// Adds these counters to `/metrics`.
    func write(into out: inout Exposition) {
        let c = counters.withLock { $0 }
        let outcomes = Outcome.allCases.enumerated().map { (#"{outcome="\#($1.rawValue)"}"#, "\(c.outcomes[$0])") }
        out.metric("aspect_source_fetches_total", "counter", "Fetches from the origin, by outcome.", outcomes)
        out.metric("aspect_source_fetched_bytes_total", "counter", "Source bytes downloaded from the origin.", c.bytes)
        out.metric(
            "aspect_source_cache_hits_total", "counter", "Requests whose source was in the source cache and current.",
            c.hits)
        out.metric(
            "aspect_source_cache_misses_total", "counter", "Requests whose source had to be fetched or revalidated.",
            c.misses)
        out.metric("aspect_source_fetches_in_flight", "gauge", "Fetches from the origin in progress.", c.inFlight)
        out.histogram("aspect_source_fetch_seconds", "Time of one fetch from the origin.", c.fetchTime)
    }
}
