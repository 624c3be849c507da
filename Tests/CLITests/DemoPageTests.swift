import Foundation
import TestSupport
import Testing

/// The demo page at `/` in a real browser: Debian's headless Chromium loads it from the
/// running binary, and every thumbnail on it must have loaded at the size the geometry
/// plans. It also saves the screenshot the README shows (docs/demo.png is a copy) (in .build/, for a person to look at).
@Suite(.serialized) struct DemoPageTests {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    static func browser(_ args: [String]) throws -> String {
        // Not a skip: without the browser the test fails, and says how to get it.
        guard let chromium else { throw TestError("no Chromium: run `bash scripts/setup.sh test`") }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: chromium)
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("aspect-chromium-\(UUID())")
        defer { try? FileManager.default.removeItem(at: profile) }
        p.arguments =
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                "--user-data-dir=\(profile.path)", "--virtual-time-budget=20000",
            ] + args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    struct Row: Decodable {
        let src: String
        let complete: Bool
        let natural: String
        let expect: String
    }

    struct Placeholder: Decodable {
        let info: String
        let ratio: Double
        let shown: Double
        let drawn: Int
    }

    struct Report: Decodable {
        let images: [Row]
        let placeholders: [Placeholder]
        let innerWidth: Int
        let scrollWidth: Int
    }

    @Test func everyThumbnailOnThePageLoadsAtThePlannedSize() throws {
        let dir = try ServeProcess.sampleFolder("demo")
        defer { try? FileManager.default.removeItem(at: dir) }
        let serve = try ServeProcess(
            samples: dir,
            env: [
                "ASPECT_HTTP_DEMOPAGE": "true",
                "ASPECT_PRESETS": #"{"avatar": "w=120&ratio=1&mode=fill&gravity=smart&shape=circle&format=png"}"#,
            ])
        let url = "http://127.0.0.1:\(serve.port)/"
        // A 1280-pixel-wide window, as a laptop's browser: the page must fit it.
        let dom = try Self.browser(["--dump-dom", "--window-size=1280,1600", url])
        let pre = try #require(
            dom.range(of: #"<pre id="report"[^>]*>(.*?)</pre>"#, options: .regularExpression).map { dom[$0] },
            "no report in the page: \(dom.prefix(300))")
        let json = pre.replacingOccurrences(of: #"<pre id="report"[^>]*>"#, with: "", options: .regularExpression)
            .replacingOccurrences(of: "</pre>", with: "").replacingOccurrences(of: "&amp;", with: "&")
        let report = try JSONDecoder().decode(Report.self, from: Data(json.utf8))
        let rows = report.images
        // Eight samples (an animation, an SVG, a PDF and a video among them), nine cells each
        // (gravity=face beside smart among them) and one for the embedded default's preset,
        // which this test's configuration names too, and the video's hover preview.
        #expect(rows.count == 81, "\(rows.count) thumbnails on the page")
        #expect(rows.contains { $0.src.contains("src=bounce.gif") && $0.src.contains("preset=avatar") })
        for r in rows {
            #expect(r.complete && r.natural != "0x0", "\(r.src) did not load")
            #expect(r.natural == r.expect, "\(r.src): \(r.natural), planned \(r.expect)")
        }
        // A placeholder per sample, decoded by the page from /info's ThumbHash and shown at
        // the image's ratio (within a pixel of 120 wide).
        #expect(report.placeholders.count == 8)
        for p in report.placeholders {
            #expect(p.drawn > 0, "\(p.info): nothing decoded")
            #expect(abs(p.shown - p.ratio) < 0.02, "\(p.info): shown at \(p.shown), the image is \(p.ratio)")
        }
        // Nothing overflows to the right: every column, the capsules and presets included, is
        // on screen without scrolling.
        #expect(report.innerWidth == 1280, "the window is \(report.innerWidth) wide")
        #expect(
            report.scrollWidth <= report.innerWidth, "the page is \(report.scrollWidth) px wide in a 1280 px window")
        // The screenshot at the same width, for a person to look at (docs/demo.png is a copy).
        let shot = Binary.repositoryRoot.appendingPathComponent(".build/demo.png")
        _ = try Self.browser(["--screenshot=\(shot.path)", "--window-size=1280,1400", url])
        let png = try Data(contentsOf: shot)
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 50_000)
    }

    @Test func thePageIsOffUnlessTheKeyTurnsItOn() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aspect-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let serve = try ServeProcess(dir: dir, env: ["ASPECT_IMAGES_ROOT": "."])
        let c = try TestClient(port: serve.port, timeoutSeconds: 10)
        try c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try c.response().status == 404)
    }
}
