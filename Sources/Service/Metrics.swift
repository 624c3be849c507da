import Core
import HTTP
import Stores
import Synchronization

/// The service's counters, and the Prometheus text exposition of them with the cache's
/// and the server's live figures.
final class Metrics: Sendable {
    /// The routes requests are counted by.
    enum RouteLabel: Int, CaseIterable {
        case thumb, info, healthz, readyz, metrics, demo, imgproxy, thumbor, purge, other, storyboard

        var text: String {
            switch self {
            case .thumb: "/thumb"
            case .info: "/info"
            case .healthz: "/healthz"
            case .readyz: "/readyz"
            case .metrics: "/metrics"
            case .demo: "/"
            case .imgproxy: "imgproxy"
            case .thumbor: "thumbor"
            case .purge: "/purge"
            case .other: "other"
            case .storyboard: "/storyboard.vtt"
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
        var sourceHits = 0
        var sourceMisses = 0
        var fetchesAbandoned = 0
        var fallbacks = 0
        var purges = 0
        var purged = 0
        var render = Histogram(bounds: Metrics.bounds)
        /// `format=best`'s choices, by `BestChoice.names`.
        var best = [Int](repeating: 0, count: BestChoice.names.count)
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
    /// A purge that removed `variants` cached variants.
    func purge(variants: Int) {
        counters.withLock {
            $0.purges += 1
            $0.purged += variants
        }
    }

    /// A queued fetch was dropped: its client had gone.
    func fetchAbandoned() { counters.withLock { $0.fetchesAbandoned += 1 } }
    func fallback() { counters.withLock { $0.fallbacks += 1 } }

    /// A request found its source known and current (or servable while re-checked), or not.
    func sourceCache(hit: Bool) {
        counters.withLock { if hit { $0.sourceHits += 1 } else { $0.sourceMisses += 1 } }
    }

    func bestChosen(_ choice: BestChoice) {
        guard let i = BestChoice.names.firstIndex(of: choice.name) else { return }
        counters.withLock { $0.best[i] += 1 }
    }

    func rendered(seconds: Double) {
        counters.withLock { $0.render.observe(seconds) }
    }

    func exposition(
        results: any ResultStore, fetches: FetchFigures?, fetchQueue: Int, server: ServerSnapshot,
        workers: WorkerFigures? = nil
    ) -> String {
        let c = counters.withLock { $0 }
        var out = Exposition()
        var requests: [(labels: String, value: String)] = []
        for route in RouteLabel.allCases.sorted(by: { $0.text < $1.text }) {
            for slot in 0..<Metrics.statusSlots {
                let n = c.requests[route.rawValue * Metrics.statusSlots + slot]
                if n > 0 { requests.append((#"{route="\#(route.text)",status="\#(slot + 100)"}"#, "\(n)")) }
            }
        }
        out.metric(
            "aspect_requests_total", "counter", "Requests answered by the service, by route and status.", requests)
        out.metric("aspect_cache_hits_total", "counter", "Thumbnails served from the disk cache.", c.hits)
        out.metric("aspect_cache_misses_total", "counter", "Thumbnails not in the disk cache.", c.misses)
        let figures = results.figures
        out.metric(
            "aspect_cache_evictions_total", "counter", "Entries evicted to stay under cache.maxBytes.",
            figures.evictions)
        out.metric(
            "aspect_cache_bytes", "gauge", "Bytes the disk cache occupies, in whole blocks of its file system.",
            figures.bytes)
        out.metric("aspect_cache_entries", "gauge", "Entries in the disk cache.", figures.entries)
        out.metric(
            "aspect_cache_indexing", "gauge",
            "1 while the disk cache's index is filled from its folder or the folder trimmed to the cap (it serves meanwhile).",
            results.isIndexing ? 1 : 0)
        out.metric("aspect_renders_total", "counter", "Thumbnails rendered by libvips.", c.render.count)
        out.metric(
            "aspect_coalesced_waiters_total", "counter", "Requests that waited for an identical render in flight.",
            c.coalesced)
        out.histogram("aspect_render_seconds", "Time to render one thumbnail.", c.render)
        out.metric(
            "aspect_best_format_total", "counter", "Formats format=best chose, by format (webp-lossless apart).",
            BestChoice.names.enumerated().map { (#"{format="\#($0.element)"}"#, "\(c.best[$0.offset])") })
        out.metric("aspect_purges_total", "counter", "POST /purge requests carried out.", c.purges)
        if let shared = results.sharedFigures {
            out.metric("aspect_shared_hits_total", "counter", "Local misses found in the shared tier.", shared.hits)
            out.metric("aspect_shared_misses_total", "counter", "Local misses not in the shared tier.", shared.misses)
            out.metric(
                "aspect_shared_uploads_total", "counter", "Uploads to the shared tier, by outcome.",
                SharedFigures.Upload.allCases.map { (#"{outcome="\#($0.label)"}"#, "\(shared.uploads[$0.rawValue])") })
            out.metric("aspect_shared_upload_queue", "gauge", "Uploads waiting for the shared tier.", shared.queued)
        }
        out.metric("aspect_purged_variants_total", "counter", "Cached variants removed by purges.", c.purged)
        out.metric(
            "aspect_fallbacks_total", "counter",
            "Answers given the fallback image (images.fallback) for a missing or undecodable source.", c.fallbacks)
        out.metric("aspect_queue_depth", "gauge", "Image jobs waiting for a worker.", server.queueDepth)
        out.metric("aspect_workers_busy", "gauge", "Workers rendering now.", server.workersBusy)
        out.metric("aspect_open_connections", "gauge", "Open client connections.", server.connections)
        out.metric(
            "aspect_connections_refused_total", "counter", "Connections answered 503 for server.maxConnections.",
            server.refused)
        out.metric(
            "aspect_connections_shed_total", "counter",
            "Connections given up for a newcomer while the table was full, by reason.",
            ["idle", "answered", "slow_head", "slow_read"].map { (#"{reason="\#($0)"}"#, "\(server.shed[$0] ?? 0)") })
        out.metric(
            "aspect_slow_readers_cut_total", "counter",
            "Answers cut for being read slower than server.minSendBytesPerSecond.", server.cutSlowReaders)
        out.metric(
            "aspect_accept_paused_total", "counter",
            "Times an event loop stopped accepting because the process ran out of descriptors or memory.",
            server.acceptsPaused)
        if let fetches { write(fetches, c, fetchQueue: fetchQueue, into: &out) }
        if let workers {
            out.metric("aspect_render_workers", "gauge", "Render worker processes running.", workers.live)
            out.metric(
                "aspect_worker_restarts_total", "counter",
                "Render workers replaced, by why the one before went (SPEC: Isolation).",
                WorkerFigures.reasons.map { (#"{reason="\#($0)"}"#, "\(workers.restarts[$0] ?? 0)") })
            if let landlock = workers.landlock {
                let abi = landlock > 0 ? "\(landlock)" : "none"
                out.metric(
                    "aspect_sandbox_info", "gauge",
                    "What holds a render worker: the Landlock ABI (none: the kernel has none) and the seccomp filter.",
                    [(#"{landlock="\#(abi)",seccomp="allowlist"}"#, "1")])
            }
        }
        return out.text
    }

    /// The figures of a fetching source store.
    private func write(_ f: FetchFigures, _ c: Counters, fetchQueue: Int, into out: inout Exposition) {
        let outcomes = FetchFigures.Outcome.allCases.map { (#"{outcome="\#($0.rawValue)"}"#, "\(f[$0])") }
        out.metric("aspect_source_fetches_total", "counter", "Fetches from the origin, by outcome.", outcomes)
        out.metric("aspect_source_fetched_bytes_total", "counter", "Source bytes downloaded from the origin.", f.bytes)
        out.metric(
            "aspect_source_cache_hits_total", "counter",
            "Requests whose source was in the source cache and current (or served while re-checked).", c.sourceHits)
        out.metric(
            "aspect_source_cache_misses_total", "counter", "Requests whose source had to be fetched or revalidated.",
            c.sourceMisses)
        out.metric("aspect_source_fetches_in_flight", "gauge", "Fetches from the origin in progress.", f.inFlight)
        out.metric(
            "aspect_source_fetches_queued", "gauge", "Fetches waiting for a fetch thread.", fetchQueue)
        out.metric(
            "aspect_source_rechecks_queued", "gauge", "Re-checks of kept sources waiting for their thread.",
            f.recheckQueue)
        out.metric(
            "aspect_source_fetches_abandoned_total", "counter",
            "Queued fetches dropped because their client had gone.", c.fetchesAbandoned)
        out.metric(
            "aspect_source_served_stale_total", "counter",
            "Requests served from a kept source while its re-check was pending or had failed.", f.servedStale)
        out.histogram("aspect_source_fetch_seconds", "Time of one fetch from the origin.", f.fetchTime)
    }
}
