import Core
import Foundation
import Imaging
import ImagingTestSupport
import TestSupport
import Testing

/// `aspect thumb` and `aspect-bench` through the real binaries.
@Suite struct ThumbCommandTests {
    let dir: URL
    let source: String

    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("aspect-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var pixels: [UInt8] = []
        for y in 0..<480 {
            for x in 0..<640 { pixels += [UInt8(x % 256), UInt8(y % 256), 128] }
        }
        source = dir.appendingPathComponent("photo.jpg").path
        try Data(ImageFile.encode(RawImage(width: 640, height: 480, bands: 3, pixels: pixels), as: .jpeg)).write(
            to: URL(fileURLWithPath: source))
    }

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// The flags come from /thumb's one parameter list: every parameter but those SRC, OUT
    /// and signing stand for is a flag, listed in the usage and accepted.
    @Test func everyThumbParameterIsAFlag() throws {
        let help = try Binary.run(["thumb", "--help"])
        #expect(help.status == 0)
        for name in ThumbRequest.parameterNames where !["src", "format", "sig"].contains(name) {
            #expect(help.stdout.contains("[--\(name) "), "--\(name) is missing from the usage")
        }
        let framed = try Binary.run(["thumb", source, path("f.png"), "--w", "64", "--frames", "1"])
        #expect(framed.status == 0, "\(framed.stderr)")
    }

    @Test(arguments: [
        (["--w", "300", "--ratio", "4:3", "--mode", "fill"], "a.jpg", 300, 225),
        (["--w=200", "--h=200", "--mode=pad", "--bg=ff0000"], "b.png", 200, 200),
        (["--w", "100", "--h", "100", "--mode", "fill", "--shape", "circle"], "c.webp", 100, 100),
        (["--h", "120"], "d.jpeg", 160, 120),
    ])
    func makesTheThumbnail(flags: [String], out: String, width: Int, height: Int) throws {
        let r = try Binary.run(["thumb", source, path(out)] + flags)
        #expect(r.status == 0, "\(r.stderr)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path(out))))
        let img = try ImageFile.decode(bytes)
        #expect(img.width == width && img.height == height)
    }

    /// `--gravity face` on a photograph of two men: the cut holds the face found (the man
    /// on the right, columns 252–295 of the 356×200 picture), where the centre's does not;
    /// the window read off the pixels against the whole picture at that scale.
    @Test func aFaceCutOnTheCommandLine() throws {
        let photo = try Photos.path("faces/zidane.jpg")
        for (out, gravity) in [("face.png", "face"), ("centre.png", "center")] {
            let r = try Binary.run(
                ["thumb", photo, path(out), "--h", "200", "--ratio", "1", "--mode", "fill", "--gravity", gravity])
            #expect(r.status == 0, "\(r.stderr)")
        }
        #expect(try Binary.run(["thumb", photo, path("whole.png"), "--h", "200"]).status == 0)
        func read(_ name: String) throws -> RawImage {
            try ImageFile.decode(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path(name)))))
        }
        let (face, centre, whole) = (try read("face.png"), try read("centre.png"), try read("whole.png"))
        #expect(face.width == 200 && face.height == 200 && whole.width == 356)
        let (faceLeft, faceRight) = (0.708 * 356, (0.708 + 0.122) * 356)
        let at = face.offset(in: whole)
        #expect(at.meanDifference < 8 && Double(at.x) <= faceLeft && Double(at.x + 200) >= faceRight, "\(at)")
        let middle = centre.offset(in: whole)
        #expect(middle.x == 78 && Double(middle.x + 200) < faceRight, "\(middle)")
    }

    /// A vector in: an SVG drawn at the asked size, a PDF's page chosen by `--page`, and a
    /// page past the last one refused as a bad argument (exit 2) naming the count.
    @Test func anSVGAndAPDFPageIn() throws {
        let svg = path("logo.svg")
        try Data(
            #"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 20"><rect width="40" height="20" fill="red"/></svg>"#
                .utf8
        ).write(to: URL(fileURLWithPath: svg))
        let r = try Binary.run(["thumb", svg, path("logo.png"), "--w", "400"])
        #expect(r.status == 0, "\(r.stderr)")
        let logo = try ImageFile.decode(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path("logo.png")))))
        #expect(logo.width == 400 && logo.height == 200 && logo.pixel(200, 100).prefix(3).elementsEqual([255, 0, 0]))
        let pdf = path("doc.pdf")
        try Data(
            ImageFile.pdf(pages: [
                ImageFile.Page(width: 300, height: 200, rgb: (255, 0, 0)),
                ImageFile.Page(width: 200, height: 300, rgb: (0, 0, 255)),
            ])
        ).write(to: URL(fileURLWithPath: pdf))
        let page = try Binary.run(["thumb", pdf, path("page.png"), "--w", "100", "--page", "2"])
        #expect(page.status == 0, "\(page.stderr)")
        let two = try ImageFile.decode(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path("page.png")))))
        #expect(two.width == 100 && two.height == 150 && two.pixel(50, 75).prefix(3).elementsEqual([0, 0, 255]))
        let past = try Binary.run(["thumb", pdf, path("none.png"), "--w", "100", "--page", "3"])
        #expect(past.status == 2 && past.stderr.contains("the source has 2 pages"), "\(past.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path("none.png")))
    }

    @Test func badArgumentsExitTwo() throws {
        let cases: [[String]] = [
            ["thumb", source, path("x.jpg"), "--w", "abc"],
            ["thumb", source, path("x.jpg"), "--width", "3"],
            ["thumb", source, path("x.bmp"), "--w", "3"],
            ["thumb", source],
            ["thumb", source, path("x.jpg"), "--w", "300", "--h", "300", "--ratio", "1"],
            ["thumb", source, path("x.jpg"), "--w"],
        ]
        for args in cases {
            let r = try Binary.run(args)
            #expect(r.status == 2, "\(args): \(r.status) \(r.stderr)")
            #expect(r.stderr.hasPrefix("aspect thumb: "), "\(r.stderr)")
        }
        let msg = try Binary.run(["thumb", source, path("x.jpg"), "--w", "abc"]).stderr
        #expect(msg.contains("w must be an integer from 1 to 4096, got 'abc'"))
        #expect(!FileManager.default.fileExists(atPath: path("x.jpg")))
    }

    @Test func badSourcesExitOneAndLeaveNoFile() throws {
        let text = path("text.jpg")
        try Data("not an image".utf8).write(to: URL(fileURLWithPath: text))
        let out = path("out.jpg")
        for src in [text, path("missing.jpg")] {
            let r = try Binary.run(["thumb", src, out, "--w", "100"])
            #expect(r.status == 1, "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
        // An existing OUT is left as it was when the source is bad.
        try Data("keep".utf8).write(to: URL(fileURLWithPath: out))
        #expect(try Binary.run(["thumb", text, out, "--w", "100"]).status == 1)
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "keep")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.isEmpty)
    }

    /// `aspect-bench rss`'s `key=value` words.
    static func values(_ r: Binary.Result) -> [String: Int] {
        var values: [String: Int] = [:]
        for part in r.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let kv = part.split(separator: "=")
            if kv.count == 2 { values[String(kv[0])] = Int(kv[1]) }
        }
        return values
    }

    /// 600 files damaged as `MutationTests` damages them (`Mutation`, the same seed), each
    /// thumbnailed twice in a process of their own: failures must not leak what they
    /// allocated.
    @Test func sixHundredMutatedFilesTwiceGrowRSSByLessThan20MB() throws {
        let folder = dir.appendingPathComponent("mutated")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let raw = RawImage(width: 96, height: 64, bands: 3, pixels: [UInt8](repeating: 90, count: 96 * 64 * 3))
        let large = RawImage(
            width: 480, height: 320, bands: 3, pixels: [UInt8](repeating: 160, count: 480 * 320 * 3))
        let originals: [(ext: String, bytes: [UInt8])] = try [
            ("jpg", ImageFile.encode(raw, as: .jpeg)), ("png", ImageFile.encode(raw, as: .png)),
            ("webp", ImageFile.encode(raw, as: .webp)), ("gif", ImageFile.encode(raw, as: .gif)),
            ("jpg", ImageFile.encode(large, as: .jpeg)),
        ]
        for (name, bytes) in Mutation.files(from: originals, count: 600, seed: 0xBAD_F11E) {
            try Data(bytes).write(to: folder.appendingPathComponent(name))
        }
        let r = try Binary.run(
            ["rss", folder.path, "--iterations", "1200", "--query", "w=48&h=48&mode=fill"], executable: "aspect-bench")
        #expect(r.status == 0, "\(r.stderr)")
        let values = Self.values(r)
        let start = try #require(values["rss_start_kb"])
        let end = try #require(values["rss_end_kb"])
        let failed = try #require(values["failed"])
        // Both outcomes occur, or the files prove nothing.
        #expect(failed > 200 && failed < 1100, "\(failed) of 1200 failed")
        #expect(end - start < 20 * 1024, "RSS grew from \(start) kB to \(end) kB over 1200 mutated files")
    }

    @Test func twoThousandThumbnailsGrowRSSByLessThan20MB() throws {
        let r = try Binary.run(
            ["rss", source, "--iterations", "2000", "--query", "w=300&h=225&mode=fill&format=jpeg"],
            executable: "aspect-bench")
        #expect(r.status == 0, "\(r.stderr)")
        let values = Self.values(r)
        let start = try #require(values["rss_start_kb"])
        let end = try #require(values["rss_end_kb"])
        #expect(start > 0 && values["iterations"] == 2000)
        #expect(end - start < 20 * 1024, "RSS grew from \(start) kB to \(end) kB over 2000 thumbnails")
    }
}
