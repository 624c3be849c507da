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
        var buckets = [Int](repeating: 0, count: FetchMetrics.bounds.count)
        var count = 0
        var sum = 0.0
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
            c.count += 1
            c.sum += seconds
            for (i, b) in FetchMetrics.bounds.enumerated() where seconds <= b { c.buckets[i] += 1 }
        }
    }

    public var fetches: [Outcome: Int] {
        let c = counters.withLock { $0 }
        var out: [Outcome: Int] = [:]
        for (i, o) in Outcome.allCases.enumerated() { out[o] = c.outcomes[i] }
        return out
    }

    /// The Prometheus text of these counters.
    func exposition() -> String {
        let c = counters.withLock { $0 }
        var out = "# HELP aspect_source_fetches_total Fetches from the origin, by outcome.\n"
        out += "# TYPE aspect_source_fetches_total counter\n"
        for (i, o) in Outcome.allCases.enumerated() {
            out += "aspect_source_fetches_total{outcome=\"\(o.rawValue)\"} \(c.outcomes[i])\n"
        }
        out += "# HELP aspect_source_fetched_bytes_total Source bytes downloaded from the origin.\n"
        out += "# TYPE aspect_source_fetched_bytes_total counter\naspect_source_fetched_bytes_total \(c.bytes)\n"
        out += "# HELP aspect_source_cache_hits_total Requests whose source was in the source cache and current.\n"
        out += "# TYPE aspect_source_cache_hits_total counter\naspect_source_cache_hits_total \(c.hits)\n"
        out += "# HELP aspect_source_cache_misses_total Requests whose source had to be fetched or revalidated.\n"
        out += "# TYPE aspect_source_cache_misses_total counter\naspect_source_cache_misses_total \(c.misses)\n"
        out += "# HELP aspect_source_fetches_in_flight Fetches from the origin in progress.\n"
        out += "# TYPE aspect_source_fetches_in_flight gauge\naspect_source_fetches_in_flight \(c.inFlight)\n"
        out += "# HELP aspect_source_fetch_seconds Time of one fetch from the origin.\n"
        out += "# TYPE aspect_source_fetch_seconds histogram\n"
        for (i, b) in FetchMetrics.bounds.enumerated() {
            out += "aspect_source_fetch_seconds_bucket{le=\"\(b)\"} \(c.buckets[i])\n"
        }
        out += "aspect_source_fetch_seconds_bucket{le=\"+Inf\"} \(c.count)\n"
        out += "aspect_source_fetch_seconds_sum \(c.sum)\naspect_source_fetch_seconds_count \(c.count)\n"
        return out
    }
}
