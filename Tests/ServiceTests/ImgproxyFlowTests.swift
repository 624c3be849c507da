import Core
import Foundation
import Testing

/// imgproxy URLs through the flow (SPEC: imgproxy URLs): a URL whose meaning depends on
/// the source is settled by its header before it has a key, once per URL and version of
/// the source; then it is the native request's entry.
@Suite struct ImgproxyFlowTests {
    @Test func aURLIsSettledByTheHeaderOnceAndSharesTheNativeEntry() throws {
        let h = try Harness { $0.imgproxy.enabled = true }
        let dialect = "/insecure/rs:fill:300:225/plain/landscape.jpg"
        let first = h.get(dialect)
        #expect(first.status == 200 && first.text.hasPrefix("300x225 jpeg "), "\(first.text)")
        #expect(h.renderer.headers.load(ordering: .relaxed) == 1)
        // The native request it means: the same entry, a hit.
        let native = h.get("/thumb?src=landscape.jpg&w=300&h=225&mode=fill&format=jpeg")
        #expect(native.headers["X-Cache"] == "HIT" && native.headers["ETag"] == first.headers["ETag"])
        // Again: a hit from the memo, no header read.
        #expect(h.get(dialect).headers["X-Cache"] == "HIT" && h.renderer.headers.load(ordering: .relaxed) == 1)
        // The result gone (purged, evicted): rendered again, still without a header read.
        _ = h.results.purge(source: "landscape.jpg")
        let again = h.get(dialect)
        #expect(again.headers["X-Cache"] == "MISS" && again.headers["ETag"] == first.headers["ETag"])
        #expect(h.renderer.headers.load(ordering: .relaxed) == 1 && h.renderer.renders.load(ordering: .relaxed) == 2)
        // A new version of the source: settled anew.
        try h.sources.put("landscape.jpg", "1600x2400 jpeg")
        let turned = h.get(dialect)
        #expect(turned.status == 200 && turned.headers["ETag"] != first.headers["ETag"], "\(turned.text)")
        #expect(h.renderer.headers.load(ordering: .relaxed) == 2)
    }

    /// No format keeps the source's: a PNG stays a PNG, with no `Vary: Accept`.
    @Test func noFormatKeepsTheSourcesFormat() throws {
        let h = try Harness { $0.imgproxy.enabled = true }
        let png = h.get("/insecure/w:100/plain/logo.png", headers: [("Accept", "image/webp")])
        #expect(png.headers["Content-Type"] == "image/png" && png.headers["Vary"] == nil, "\(png.text)")
    }
}
