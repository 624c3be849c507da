import Foundation
import TestSupport
import Testing

/// `q=auto` and `output.quality=auto` through the binary (SPEC: Efficiency): `X-Quality`
/// on the render and on the hits after it, an entry of its own, and the settings in the key.
@Suite(.serialized) struct AutoQualityServiceTests {
    let dir: URL

    init() throws { dir = try ServeProcess.sampleFolder("quality") }

    @Test func xQualityNamesTheChoiceOnMissesAndHits() throws {
        let server = try ServeProcess(samples: dir)
        let miss = try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&w=300&format=jpeg&q=auto")
        let q = try #require(miss.headers["x-quality"].flatMap(Int.init), "\(miss.headers)")
        #expect((30...90).contains(q) && miss.headers["x-cache"] == "MISS")
        let hit = try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&w=300&format=jpeg&q=auto")
        #expect(hit.headers["x-cache"] == "HIT" && hit.headers["x-quality"] == String(q) && hit.body == miss.body)
        let fixed = try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&w=300&format=jpeg&q=\(q)")
        #expect(fixed.headers["x-quality"] == nil && fixed.headers["etag"] != miss.headers["etag"])
        // PNG has no quality to choose.
        let png = try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&w=300&format=png&q=auto")
        #expect(png.status == 200 && png.headers["x-quality"] == nil)
    }

    /// output.quality=auto: a request without q is searched; the search's settings are in
    /// the key, so a restart with another target renders again.
    @Test func theDefaultCanBeAuto() throws {
        var server = try ServeProcess(samples: dir, env: ["ASPECT_OUTPUT_QUALITY": "auto"])
        let first = try ServiceTests.get(server.port, "/thumb?src=portrait.jpg&w=200&format=webp")
        #expect(first.headers["x-quality"] != nil)
        #expect(
            try ServiceTests.get(server.port, "/thumb?src=portrait.jpg&w=200&format=webp&q=75").headers["x-quality"]
                == nil)
        server.signal(SIGTERM)
        _ = server.wait(seconds: 10)
        server = try ServeProcess(
            samples: dir, env: ["ASPECT_OUTPUT_QUALITY": "auto", "ASPECT_OUTPUT_AUTOQUALITYSSIM": "0.995"])
        let stricter = try ServiceTests.get(server.port, "/thumb?src=portrait.jpg&w=200&format=webp")
        #expect(stricter.headers["x-cache"] == "MISS" && stricter.headers["etag"] != first.headers["etag"])
        let (a, b) = (Int(first.headers["x-quality"] ?? "") ?? 0, Int(stricter.headers["x-quality"] ?? "") ?? 0)
        #expect(b >= a, "0.985: q=\(a); 0.995: q=\(b)")
        let bad = try Binary.run(
            ["serve", "--port", "0"],
            env: ["ASPECT_OUTPUT_AUTOQUALITYMIN": "95", "ASPECT_OUTPUT_AUTOQUALITYMAX": "90"],
            cwd: dir)
        #expect(bad.status == 2 && bad.stderr.contains("output.autoQualityMin"))
    }
}
