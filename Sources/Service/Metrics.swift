import HTTPServer
import Synchronization

/// The service's counters, and the Prometheus text exposition of them with the cache's
/// and the server's live figures.
final class Metrics: Sendable {
    /// The routes requests are counted by.
    enum RouteLabel: Int, CaseIterable {
        case thumb, info, healthz, readyz, metrics, demo, other

        var text: String {
            switch self {
            case .thumb: "/thumb"
            case .info: "/info"
            case .healthz: "/healthz"
            case .readyz: "/readyz"
            case .metrics: "/metrics"
            case .demo: "/"
            case .other: "other"
            }
        }
    }

    /// Statuses 100 … 599, a slot each per route: counting a request allocates nothing.
    static let statusSlots = 500

    struct Counters {
        var requests = [Int](repeating: 0, count: RouteLabel.allCases.count * Metrics.statusSlots)
        var hits = 0
        var misses = 0
        var coalesced = 0
        var renderBuckets = [Int](repeating: 0, count: Metrics.bounds.count)
        var renderCount = 0
        var renderSum = 0.0
    }

    /// Render-time histogram bounds, in seconds.
    static let bounds: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    private let counters = Mutex(Counters())

    func request(route: RouteLabel, status: Int) {
        let slot = min(max(status, 100), 599) - 100
        counters.withLock { $0.requests[route.rawValue * Metrics.statusSlots + slot] += 1 }
    }

    func hit() { counters.withLock { $0.hits += 1 } }
    func miss() { counters.withLock { $0.misses += 1 } }
    func coalesced() { counters.withLock { $0.coalesced += 1 } }

    func rendered(seconds: Double) {
        counters.withLock { c in
            c.renderCount += 1
            c.renderSum += seconds
            for (i, b) in Metrics.bounds.enumerated() where seconds <= b { c.renderBuckets[i] += 1 }
        }
    }

    func exposition(results: any ResultStore, fetches: FetchMetrics?, server: ServerStats) -> String {
        let c = counters.withLock { $0 }
        var out = ""
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(String, String)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for (labels, value) in samples { out += "\(name)\(labels) \(value)\n" }
        }
        var requests: [(String, String)] = []
        for route in RouteLabel.allCases.sorted(by: { $0.text < $1.text }) {
            for slot in 0..<Metrics.statusSlots {
                let n = c.requests[route.rawValue * Metrics.statusSlots + slot]
                if n > 0 { requests.append((#"{route="\#(route.text)",status="\#(slot + 100)"}"#, "\(n)")) }
            }
        }
        metric("aspect_requests_total", "counter", "Requests answered by the service, by route and status.", requests)
        metric("aspect_cache_hits_total", "counter", "Thumbnails served from the disk cache.", [("", "\(c.hits)")])
        metric("aspect_cache_misses_total", "counter", "Thumbnails not in the disk cache.", [("", "\(c.misses)")])
        let figures = results.figures
        metric(
            "aspect_cache_evictions_total", "counter", "Entries evicted to stay under cache.maxBytes.",
            [("", "\(figures.evictions)")])
        metric("aspect_cache_bytes", "gauge", "Bytes held in the disk cache.", [("", "\(figures.bytes)")])
        metric("aspect_cache_entries", "gauge", "Entries in the disk cache.", [("", "\(figures.entries)")])
        metric("aspect_renders_total", "counter", "Thumbnails rendered by libvips.", [("", "\(c.renderCount)")])
        metric(
            "aspect_coalesced_waiters_total", "counter", "Requests that waited for an identical render in flight.",
            [("", "\(c.coalesced)")])
        var buckets: [(String, String)] = []
        for (i, b) in Metrics.bounds.enumerated() { buckets.append((#"_bucket{le="\#(b)"}"#, "\(c.renderBuckets[i])")) }
        buckets += [
            (#"_bucket{le="+Inf"}"#, "\(c.renderCount)"), ("_sum", "\(c.renderSum)"), ("_count", "\(c.renderCount)"),
        ]
        out += "# HELP aspect_render_seconds Time to render one thumbnail.\n# TYPE aspect_render_seconds histogram\n"
        for (suffix, value) in buckets { out += "aspect_render_seconds\(suffix) \(value)\n" }
        metric("aspect_queue_depth", "gauge", "Image jobs waiting for a worker.", [("", "\(server.queueDepth)")])
        metric("aspect_workers_busy", "gauge", "Workers rendering now.", [("", "\(server.workersBusy)")])
        metric("aspect_open_connections", "gauge", "Open client connections.", [("", "\(server.connections)")])
        metric(
            "aspect_connections_refused_total", "counter", "Connections answered 503 for server.maxConnections.",
            [("", "\(server.refused)")])
        metric(
            "aspect_accept_paused_total", "counter",
            "Times an event loop stopped accepting because the process ran out of descriptors or memory.",
            [("", "\(server.acceptsPaused)")])
        if let fetches { out += fetches.exposition() }
        return out
    }
}
