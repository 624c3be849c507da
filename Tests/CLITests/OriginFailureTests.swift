import Foundation
import Glibc
import TestSupport
import Testing

/// A remote root under the failures found by probing it: an origin that stalls on many new
/// sources, clients that leave while their fetch waits, a full disk under `cache.dir`, an
/// origin that changes bytes under one ETag or answers an HTML page. The real binary,
/// libcurl and a loopback origin (TestOrigin).
@Suite(.serialized) struct OriginFailureTests {
    let dir: URL
    let origin: TestOrigin
    let samples: [String: [UInt8]]

    init() throws {
        dir = try ServeProcess.sampleFolder("origin-failures")
        origin = try TestOrigin()
        var samples: [String: [UInt8]] = [:]
        for name in ["landscape.jpg", "portrait.jpg"] {
            let bytes = try [UInt8](Data(contentsOf: dir.appendingPathComponent("images/\(name)")))
            samples[name] = bytes
            origin.put(name, bytes)
        }
        self.samples = samples
    }

    func serve(_ env: [String: String] = [:], prelude: String? = nil, ownMounts: Bool = false) throws -> ServeProcess {
        try ServeProcess(
            dir: dir,
            env: ["ASPECT_IMAGES_ROOT": origin.base, "ASPECT_CACHE_DIR": "cache", "ASPECT_LOG_ACCESS": "false"]
                .merging(env) { $1 }, prelude: prelude, ownMounts: ownMounts)
    }

    /// Sends a GET and leaves the connection open, unread.
    static func hold(_ port: Int, _ target: String) throws -> TestClient {
        let c = try TestClient(port: port, timeoutSeconds: 60)
        try c.send("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n")
        return c
    }

    /// A GET that must be answered within `seconds` (the client gives up after).
    static func get(_ port: Int, _ target: String, within seconds: Int) throws -> TestClient.Response {
        let c = try TestClient(port: port, timeoutSeconds: seconds)
        try c.send("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n")
        return try c.response()
    }

    /// Every fetch thread and the fetch queue taken by downloads that drip a byte a second
    /// for 60 s: a cached result of a kept source, a new size of it, and its re-check all
    /// go on. (Before, each waited behind the drips: 38 s for a hit, 167 s for a new size.)
    @Test func hitsAndNewSizesOfKeptSourcesDoNotWaitBehindStalledDownloads() throws {
        let s = try serve([
            "ASPECT_SOURCES_REVALIDATESECONDS": "1", "ASPECT_SOURCES_TIMEOUTMS": "60000",
            "ASPECT_SOURCES_CONCURRENCY": "4", "ASPECT_SOURCES_QUEUEDEPTH": "64",
        ])
        let first = try ServiceTests.get(s.port, "/thumb?src=files/landscape.jpg&w=90")
        #expect(first.status == 200 && first.headers["x-cache"] == "MISS")
        var held: [TestClient] = []
        for i in 0..<40 {
            origin.put("d\(i).jpg", samples["landscape.jpg"] ?? [])
            held.append(try Self.hold(s.port, "/thumb?src=drip/d\(i).jpg&w=90"))
        }
        // Until the drips hold every fetch thread and fill the queue behind them.
        try HTTPOriginTests.waitUntil { origin.log.filter { $0.contains("/drip/") }.count >= 4 }
        usleep(1_200_000)  // past sources.revalidateSeconds: the kept source is due a re-check
        let hit = try Self.get(s.port, "/thumb?src=files/landscape.jpg&w=90", within: 5)
        #expect(hit.status == 200 && hit.headers["x-cache"] == "HIT" && hit.body == first.body)
        let newSize = try Self.get(s.port, "/thumb?src=files/landscape.jpg&w=120", within: 5)
        #expect(newSize.status == 200 && newSize.headers["x-cache"] == "MISS")
        // The re-check went to the origin on its own lane, and answered 304 (counted once the
        // re-check thread has read the answer, which may be after the origin logged it).
        let notModified = #"aspect_source_fetches_total{outcome="not_modified"} 1"#
        try ServiceTests.waitForMetrics(s.port) { $0.contains(notModified) }
        let metrics = ServiceTests.metrics(s.port)
        #expect(metrics.contains(notModified) && origin.requests("/files/landscape.jpg", conditional: true) == 1)
        #expect(!metrics.contains("aspect_source_served_stale_total 0"), "\(metrics)")
        held.removeAll()
    }

    /// Fetches queued for clients that have gone are dropped, not made: a new source asked
    /// for after them waits for the two stalled downloads only.
    @Test func queuedFetchesWhoseClientsLeftAreDropped() throws {
        let s = try serve([
            "ASPECT_SOURCES_TIMEOUTMS": "2000", "ASPECT_SOURCES_CONCURRENCY": "2", "ASPECT_SOURCES_QUEUEDEPTH": "64",
        ])
        let stalled = [
            try Self.hold(s.port, "/thumb?src=stall-head/a.jpg&w=90"),
            try Self.hold(s.port, "/thumb?src=stall-head/b.jpg&w=90"),
        ]
        try HTTPOriginTests.waitUntil { origin.log.filter { $0.contains("/stall-head/") }.count == 2 }
        for i in 0..<20 {
            // Sent, then the client hangs up while its fetch waits in the queue.
            _ = try Self.hold(s.port, "/thumb?src=stall-head/gone-\(i).jpg&w=90")
        }
        // Behind 20 queued stalls of 2 s on 2 threads this would take 20 s.
        let fresh = try Self.get(s.port, "/thumb?src=files/portrait.jpg&w=90", within: 8)
        #expect(fresh.status == 200)
        #expect(origin.log.filter { $0.contains("/stall-head/gone-") }.isEmpty, "\(origin.log)")
        // Counted by the fetch threads as they reach each dropped job, maybe after `fresh`.
        try ServiceTests.waitForMetrics(s.port) { $0.contains("aspect_source_fetches_abandoned_total 20") }
        _ = stalled
    }

    /// `cache.dir` on a filesystem with no room left (a 1 MiB tmpfs filled up, in a mount
    /// namespace of the server's own): downloads are served from memory, not a 502, and
    /// /readyz says the service serves uncached.
    @Test func aFullCacheDiskServesDownloadsUncachedAndSaysSo() throws {
        let s = try serve(
            prelude: "mkdir -p cache && mount -t tmpfs -o size=1m tmpfs cache && mkdir cache/sources "
                + "&& (head -c 2m /dev/zero > cache/fill || true)",
            ownMounts: true)
        for (i, name) in ["landscape.jpg", "portrait.jpg", "landscape.jpg"].enumerated() {
            let r = try ServiceTests.get(s.port, "/thumb?src=files/\(name)&w=\(90 + i)")
            #expect(r.status == 200, "\(name): \(r.text)")
            #expect(ServiceTests.magic(r.body) == "image/jpeg")
        }
        let ready = try ServiceTests.get(s.port, "/readyz")
        #expect(ready.status == 200 && ready.text.hasPrefix("ready, serving uncached"), "\(ready.text)")
        let metrics = try ServiceTests.get(s.port, "/metrics").text
        #expect(metrics.contains(#"aspect_source_fetches_total{outcome="downloaded"} 3"#), "\(metrics)")
    }

    /// An origin that sends other bytes under the ETag it already gave (a 200 where a 304
    /// was due): the bytes decide, so the new picture gets a new identity and new results.
    @Test func newBytesUnderAnUnchangedETagAreANewVersion() throws {
        let s = try serve(["ASPECT_SOURCES_REVALIDATESECONDS": "0", "ASPECT_SOURCES_STALESECONDS": "0"])
        origin.put("same.jpg", samples["landscape.jpg"] ?? [], etag: "\"fixed\"")
        let first = try ServiceTests.get(s.port, "/thumb?src=no-304/same.jpg&w=90")
        origin.put("same.jpg", samples["portrait.jpg"] ?? [], etag: "\"fixed\"")
        let unchangedTag = try ServiceTests.get(s.port, "/thumb?src=no-304/same.jpg&w=90")
        #expect(origin.requests("/no-304/same.jpg", conditional: true) == 1)
        #expect(first.status == 200 && unchangedTag.status == 200)
        #expect(unchangedTag.headers["etag"] != first.headers["etag"], "one ETag, two pictures: two identities")
        #expect(unchangedTag.body != first.body)
    }

    /// An HTML page (an origin's error page sent with a 200) or a gzip is not a source: a
    /// 415 at once, and nothing kept in the source cache.
    @Test(arguments: [
        ("page.html", Array("<!DOCTYPE html><html><body>Not here</body></html>".utf8), "an HTML page"),
        ("archive.gz", [0x1F, 0x8B, 0x08, 0x00] + [UInt8](repeating: 0, count: 60), "gzip-compressed data"),
    ])
    func aNonImageBodyIsA415AndNotKept(name: String, bytes: [UInt8], kind: String) throws {
        let s = try serve()
        origin.put(name, bytes)
        let r = try ServiceTests.get(s.port, "/thumb?src=files/\(name)&w=90")
        #expect(r.status == 415 && r.text.contains(kind), "\(r.text)")
        let kept =
            (try? FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("cache/sources").path))
            ?? []
        #expect(!kept.contains { $0.hasSuffix(".src") }, "\(kept)")
    }
}
