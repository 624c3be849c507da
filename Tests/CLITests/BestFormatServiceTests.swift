import Core
import Foundation
import ImagingTestSupport
import TestSupport
import Testing

@testable import Imaging

/// `format=best` through the binary (SPEC: Efficiency): the smallest of the formats the
/// client takes, each at `q=auto`'s floor; lossless for a drawing where that is smallest;
/// never a format `Accept` does not list; its choice said, kept per accepted set, counted.
@Suite(.serialized) struct BestFormatServiceTests {
    let dir: URL
    static let browser = "image/avif,image/webp,image/jxl,*/*"

    init() throws {
        dir = try ServeProcess.sampleFolder("best")
        // Two drawings of bench/drawings, made by `aspect thumb` from SVG at their own size
        // (the fonts are the machine's) and kept as PNG sources: a bar chart with labels,
        // and a settings page of text.
        for name in ["chart", "screen"] {
            let svg = Binary.repositoryRoot.appendingPathComponent("bench/drawings/\(name).svg").path
            let made = try Binary.run(["thumb", svg, dir.appendingPathComponent("images/\(name).png").path])
            guard made.status == 0 else { throw TestError("\(name) could not be drawn: \(made.stderr)") }
        }
    }

    static func get(_ port: Int, _ target: String, accept: String?) throws -> TestClient.Response {
        try ServiceTests.get(port, target, headers: accept.map { ["Accept": $0] } ?? [:])
    }

    /// Its RGB, when any alpha band is wholly opaque; nil when it is not.
    static func opaque(_ image: RawImage) -> [UInt8]? {
        guard image.bands == 4 else { return image.bands == 3 ? image.pixels : nil }
        var rgb: [UInt8] = []
        for i in stride(from: 0, to: image.pixels.count, by: 4) {
            guard image.pixels[i + 3] == 255 else { return nil }
            rgb += image.pixels[i..<(i + 3)]
        }
        return rgb
    }

    /// The luma SSIM of an encoded result against the unencoded picture (a PNG of it).
    static func ssim(_ bytes: [UInt8], against png: [UInt8]) throws -> Double {
        let (a, b) = (try ImageFile.decode(png), try ImageFile.decode(bytes))
        let reference = LumaSSIM(pixels: a.pixels, width: a.width, height: a.height, bands: a.bands)
        return try #require(reference.compare(pixels: b.pixels, bands: b.bands))
    }

    /// A chart at its own size: lossless WebP is smaller than lossy WebP at the floor
    /// (sharp edges, flat colours). (A screenshot of anti-aliased text is not: lossy WebP
    /// keeps SSIM 0.985 at q 30 there, mostly white windows, and is smaller; BENCHMARKS.md.)
    @Test func aChartIsAnsweredLosslessAndSmallerThanAuto() throws {
        let server = try ServeProcess(samples: dir)
        let target = "/thumb?src=chart.png&w=900"
        let best = try Self.get(server.port, target + "&format=best", accept: "image/webp,*/*")
        let auto = try Self.get(server.port, target + "&format=auto&q=auto", accept: "image/webp,*/*")
        let lossy = try Self.get(server.port, target + "&format=webp&q=auto", accept: nil)
        let png = try Self.get(server.port, target + "&format=png", accept: nil)
        #expect(best.status == 200 && best.headers["x-format-chosen"] == "webp-lossless", "\(best.headers)")
        #expect(best.headers["content-type"] == "image/webp" && best.headers["x-quality"] == nil)
        // Lossless: the very pixels of the PNG (an alpha band that is all opaque, WebP leaves out).
        let (a, b) = (try ImageFile.decode(best.body), try ImageFile.decode(png.body))
        #expect(a.width == b.width && a.height == b.height && Self.opaque(a) != nil && Self.opaque(a) == Self.opaque(b))
        #expect(best.body.count < auto.body.count && best.body.count < lossy.body.count)
        #expect(auto.headers["content-type"] == "image/webp" && lossy.headers["x-quality"] != nil)
        // A client that takes no WebP gets the PNG, the smallest it can show here.
        let plain = try Self.get(server.port, target + "&format=best", accept: "*/*")
        #expect(plain.headers["x-format-chosen"] == "png" && plain.body == png.body)
    }

    @Test func aPhotographIsTheSmallestOfTheAcceptedFormatsEachAtTheFloor() throws {
        let server = try ServeProcess(samples: dir)
        let target = "/thumb?src=landscape.jpg&w=400&h=300&mode=fill"
        let png = try Self.get(server.port, target + "&format=png", accept: nil).body
        var sizes: [String: Int] = [:]
        for format in ["avif", "webp", "jxl", "jpeg"] {
            let one = try Self.get(server.port, target + "&format=\(format)&q=auto", accept: nil)
            #expect(one.status == 200)
            // Each candidate decoded back: at or over the floor (or at the top of the range).
            let score = try Self.ssim(one.body, against: png)
            #expect(score >= 0.985 || one.headers["x-quality"] == "90", "\(format): SSIM \(score)")
            sizes[format] = one.body.count
        }
        let best = try Self.get(server.port, target + "&format=best", accept: Self.browser)
        let chosen = try #require(best.headers["x-format-chosen"])
        let smallest = try #require(sizes.min { $0.value < $1.value || $0.value == $1.value && $0.key > $1.key })
        #expect(chosen == smallest.key && best.body.count == smallest.value, "\(sizes), chose \(chosen)")
        #expect(best.headers["content-type"] == "image/\(chosen)" && best.headers["x-quality"] != nil)
        #expect(try Self.ssim(best.body, against: png) >= 0.985)
        // A photograph is not lossless-sized: nothing lossless was its answer.
        #expect(!chosen.contains("lossless") && chosen != "png")
    }

    @Test func onlyWhatAcceptListsIsChosenAndEachAcceptedSetIsKeptApart() throws {
        let server = try ServeProcess(samples: dir)
        for src in ["landscape.jpg", "chart.png", "screen.png", "logo.png"] {
            let target = "/thumb?src=\(src)&w=300&format=best"
            let webp = try Self.get(server.port, target, accept: "image/webp")
            #expect(["webp", "webp-lossless", "jpeg", "png"].contains(webp.headers["x-format-chosen"] ?? ""), "\(src)")
            for accept in ["*/*", nil] {
                let plain = try Self.get(server.port, target, accept: accept)
                #expect(["jpeg", "png"].contains(plain.headers["x-format-chosen"] ?? ""), "\(src) \(accept ?? "none")")
            }
            let first = try Self.get(server.port, target, accept: Self.browser)
            let again = try Self.get(server.port, target, accept: Self.browser)
            #expect(first.headers["vary"]?.contains("Accept") == true && again.headers["x-cache"] == "HIT")
            #expect(again.body == first.body && again.headers["x-format-chosen"] == first.headers["x-format-chosen"])
            #expect(again.headers["x-quality"] == first.headers["x-quality"])
            // Kept per accepted set: another set is another entry, whatever it chose.
            #expect(webp.headers["etag"] != first.headers["etag"])
        }
        // Spelled with an escape, best is still told apart by Accept: the memo of one
        // client's key is not another's.
        let escaped = "/thumb?src=landscape.jpg&w=250&format=b%65st"
        let avif = try Self.get(server.port, escaped, accept: Self.browser)
        let plainAgain = try Self.get(server.port, escaped, accept: "*/*")
        #expect(["jpeg", "png"].contains(plainAgain.headers["x-format-chosen"] ?? ""), "\(plainAgain.headers)")
        #expect(avif.headers["etag"] != plainAgain.headers["etag"])
        // A picture with alpha is never a JPEG.
        let alpha = try Self.get(
            server.port, "/thumb?src=landscape.jpg&w=200&h=200&shape=circle&format=best", accept: "*/*")
        #expect(alpha.headers["x-format-chosen"] == "png")
        let metrics = try ServiceTests.get(server.port, "/metrics").text
        let counted = ["avif", "jxl", "webp", "webp-lossless", "jpeg", "png"].compactMap {
            ServiceTests.value(metrics, #"aspect_best_format_total{format="\#($0)"}"#)
        }
        // Three sets a source (none and */* are one), and the circle.
        #expect(counted.count == 6 && counted.reduce(0, +) == 15, "\(counted)")
    }

    @Test func anExplicitQualityALargeOutputAndAnAnimationAreAuto() throws {
        let server = try ServeProcess(samples: dir, env: ["ASPECT_OUTPUT_BESTMAXPIXELS": "40000"])
        let q = try Self.get(server.port, "/thumb?src=landscape.jpg&w=150&format=best&q=70", accept: Self.browser)
        #expect(q.headers["x-format-chosen"] == nil && q.headers["content-type"] == "image/webp")
        let large = try Self.get(server.port, "/thumb?src=landscape.jpg&w=300&format=best", accept: Self.browser)
        #expect(large.headers["x-format-chosen"] == nil && large.headers["content-type"] == "image/webp")
        let small = try Self.get(server.port, "/thumb?src=landscape.jpg&w=150&format=best", accept: Self.browser)
        #expect(small.headers["x-format-chosen"] != nil)
        let moving = try Self.get(server.port, "/thumb?src=bounce.gif&w=100&format=best", accept: Self.browser)
        #expect(moving.headers["x-format-chosen"] == nil && moving.headers["content-type"] == "image/webp")
        #expect(try ImageFile.animation(moving.body).frames > 1)
    }

    @Test func infoSaysTheChoiceOnceMadeAndTheDefaultCanBeBest() throws {
        let server = try ServeProcess(samples: dir, env: ["ASPECT_OUTPUT_FORMAT": "best"])
        let before = try Self.get(server.port, "/info?src=chart.png&w=900", accept: "image/webp")
        #expect(
            before.text.contains(#""format": "best""#) && before.text.contains(#""webp-lossless""#), "\(before.text)")
        // Not for a cache to keep: the choice is not made yet.
        #expect(before.headers["cache-control"] == "no-cache" && before.headers["etag"] == nil)
        // No format named: best, by output.format.
        let thumb = try Self.get(server.port, "/thumb?src=chart.png&w=900", accept: "image/webp")
        let chosen = try #require(thumb.headers["x-format-chosen"])
        let after = try Self.get(server.port, "/info?src=chart.png&w=900", accept: "image/webp")
        #expect(after.text.contains(#""chosen": "\#(chosen)""#), "\(after.text)")
        let again = try Self.get(server.port, "/info?src=chart.png&w=900", accept: "image/webp")
        #expect(again.headers["x-cache"] == "HIT" && again.body == after.body)
    }

    @Test func theCommandLineWritesTheChosenFormat() throws {
        let out = dir.appendingPathComponent("out")
        let run = try Binary.run(
            [
                "thumb", dir.appendingPathComponent("images/chart.png").path, out.path, "--format", "best", "--accept",
                "image/webp",
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let written = run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(written == out.path + ".webp", "\(written)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: written)))
        #expect(bytes.count > 0 && ResultHeader(bytes[...])?.format == .webp)
        let wrongly = try Binary.run(["thumb", "x.jpg", out.path + ".png", "--format", "jpeg"])
        #expect(wrongly.status == 2 && wrongly.stderr.contains("--format takes best"))
    }
}
