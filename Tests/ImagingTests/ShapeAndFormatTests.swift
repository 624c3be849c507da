import Core
import Foundation
import Imaging
import ImagingTestSupport
import TestSupport
import Testing

@Suite struct ShapeTests {
    let fixtures: Fixtures
    let source: String

    init() throws {
        fixtures = try Fixtures()
        source = try fixtures.write("src.png", ImageFile.encode(Fixtures.quadrants(width: 400, height: 200), as: .png))
    }

    @Test func circleHasTransparentCornersOpaqueCentreAndASoftEdge() throws {
        let (img, rendered) = try thumb(source, "w=100&h=100&mode=fill&shape=circle&format=png")
        #expect(rendered.format == .png && img.bands == 4)
        for (x, y) in [(0, 0), (99, 0), (0, 99), (99, 99), (10, 10)] {
            #expect(img.pixel(x, y)[3] == 0, "(\(x), \(y))")
        }
        for (x, y) in [(50, 50), (25, 50), (75, 50), (50, 5), (50, 94)] {
            #expect(img.pixel(x, y)[3] == 255, "(\(x), \(y))")
        }
        // Along the diagonal the alpha falls from 255 to 0 through values in between.
        let diagonal = (0..<50).map { img.pixel($0, $0)[3] }
        #expect(diagonal.contains { $0 > 0 && $0 < 255 }, "no antialiased edge: \(diagonal)")
        #expect(zip(diagonal, diagonal.dropFirst()).allSatisfy { $0 <= $1 }, "alpha must rise towards the centre")
        // The colours inside are the image's.
        #expect(Array(img.pixel(30, 30).prefix(3)) == Fixtures.red)
    }

    @Test func webpKeepsTheShapesAlpha() throws {
        let (img, rendered) = try thumb(source, "w=100&h=100&mode=fill&shape=circle&format=webp")
        #expect(rendered.format == .webp && img.bands == 4)
        #expect(img.pixel(0, 0)[3] == 0 && img.pixel(50, 50)[3] == 255)
        #expect(try !ImageFile.metadataFields(rendered.bytes).contains("exif-data"))
    }

    @Test func circleOnARectangleIsCentred() throws {
        let (img, _) = try thumb(source, "w=200&h=100&mode=fill&shape=circle&format=png")
        #expect(img.pixel(100, 50)[3] == 255)
        #expect(img.pixel(30, 50)[3] == 0 && img.pixel(170, 50)[3] == 0)  // beyond the 100-wide circle
        #expect(img.pixel(55, 50)[3] == 255 && img.pixel(145, 50)[3] == 255)
    }

    @Test func capsuleAndRounded() throws {
        let (capsule, _) = try thumb(source, "w=200&h=100&mode=fill&shape=capsule&format=png")
        #expect(capsule.pixel(0, 0)[3] == 0 && capsule.pixel(199, 99)[3] == 0)
        #expect(capsule.pixel(100, 0)[3] == 255 && capsule.pixel(100, 50)[3] == 255)
        #expect(capsule.pixel(5, 50)[3] == 255)

        let (rounded, _) = try thumb(source, "w=200&h=100&mode=fill&shape=rounded&radius=20&format=png")
        #expect(rounded.pixel(0, 0)[3] == 0 && rounded.pixel(2, 2)[3] == 0)
        #expect(rounded.pixel(20, 20)[3] == 255 && rounded.pixel(0, 50)[3] == 255 && rounded.pixel(100, 0)[3] == 255)
        let corner = (0..<20).flatMap { y in (0..<20).map { rounded.pixel($0, y)[3] } }
        #expect(corner.contains { $0 > 0 && $0 < 255 }, "no antialiased edge in the corner")
    }

    @Test func shapeOnASourceWithAlphaKeepsItsAlpha() throws {
        // A source half transparent: inside the circle the alpha stays 128.
        let raw = RawImage(
            width: 100, height: 100, bands: 4,
            pixels: Array(repeating: [10, 20, 30, 128], count: 10_000).flatMap { $0 })
        let path = try fixtures.write("alpha.png", ImageFile.encode(raw, as: .png))
        let (img, _) = try thumb(path, "w=100&h=100&mode=fill&shape=circle&format=png")
        #expect(img.pixel(50, 50) == [10, 20, 30, 128])
        #expect(img.pixel(0, 0)[3] == 0)
    }

    @Test func withoutAlphaTheCornersAreFlattenedOntoBg() throws {
        let (white, _) = try thumb(source, "w=100&h=100&mode=fill&shape=circle&format=jpeg")
        #expect(white.bands == 3)
        #expect(near(white.pixel(1, 1), [255, 255, 255], 16), "\(white.pixel(1, 1))")
        #expect(near(white.pixel(30, 30), Fixtures.red))
        let (black, _) = try thumb(source, "w=100&h=100&mode=fill&shape=circle&format=jpeg&bg=000000")
        #expect(near(black.pixel(1, 1), [0, 0, 0], 16), "\(black.pixel(1, 1))")
        // auto: a shape has alpha, so PNG (or WebP when accepted).
        #expect(try thumb(source, "w=100&h=100&mode=fill&shape=circle").1.format == .png)
        #expect(try thumb(source, "w=100&h=100&mode=fill&shape=circle", accept: "image/webp,*/*").1.format == .webp)
        #expect(try thumb(source, "w=100&h=100&mode=fill").1.format == .jpeg)
    }
}

@Suite struct FormatTests {
    let fixtures: Fixtures
    let source: String

    init() throws {
        fixtures = try Fixtures()
        // A JPEG carrying EXIF (the orientation tag, 1) and written without stripping.
        source = try fixtures.write(
            "exif.jpg", ImageFile.encode(Fixtures.quadrants(width: 400, height: 300), as: .jpeg, orientation: 1))
    }

    static func magic(_ bytes: [UInt8]) -> ImageFormat? {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if bytes.starts(with: Array("GIF89a".utf8)) || bytes.starts(with: Array("GIF87a".utf8)) { return .gif }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if bytes.count > 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WEBP".utf8) {
            return .webp
        }
        if bytes.count > 12, bytes[4..<8].elementsEqual("ftyp".utf8), bytes[8..<12].elementsEqual("avif".utf8) {
            return .avif
        }
        // A bare JPEG XL codestream, or one in its ISO container.
        if bytes.starts(with: Array("II*\u{0}".utf8)) || bytes.starts(with: Array("MM\u{0}*".utf8)) { return .tiff }
        if bytes.starts(with: [0xFF, 0x0A]) || bytes.starts(with: [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20]) {
            return .jxl
        }
        return nil
    }

    /// A multi-page TIFF's pages are pages, not an animation's frames: a still of its first
    /// page, whatever `format=auto` and the client take, and its page count told.
    @Test func aMultiPageTIFFIsAStillOfItsFirstPage() throws {
        let fixtures = try Fixtures()
        let page = Fixtures.quadrants(width: 120, height: 80)
        let stack = RawImage(width: 120, height: 240, bands: 3, pixels: page.pixels + page.pixels + page.pixels)
        let tiff = try fixtures.write("scan.tif", ImageFile.encode(stack, as: .tiff, pageHeight: 80))
        let info = try Thumbnailer(limits: ImagingLimits()).probe(path: tiff)
        #expect(info.format == "tiff" && info.pages == 3 && info.frames == 1, "\(info)")
        #expect(info.size == Size(width: 120, height: 80))
        let (img, rendered) = try thumb(tiff, "w=60", accept: "image/webp,*/*")
        #expect(rendered.format == .webp && img.width == 60 && img.height == 40)
        #expect(try ImageFile.animation(rendered.bytes).frames == 1)
    }

    /// JPEG XL in (a default format): read by its bytes, whatever its name, and planned
    /// on its size as any still.
    @Test func aJpegXLSourceIsReadByItsBytes() throws {
        let fixtures = try Fixtures()
        let jxl = try fixtures.write(
            "photo.jpg", ImageFile.encode(Fixtures.quadrants(width: 300, height: 200), as: .jxl, quality: 90))
        let info = try Thumbnailer(limits: ImagingLimits()).probe(path: jxl)
        #expect(info.format == "jxl" && info.size == Size(width: 300, height: 200))
        let (img, _) = try thumb(jxl, "w=150&format=png")
        #expect(img.width == 150 && img.height == 100)
        #expect(
            img.pixel(10, 10).prefix(3).elementsEqual(
                Fixtures.quadrants(width: 300, height: 200).pixel(10, 10).prefix(3)
            ) { abs(Int($0) - Int($1)) <= 12 })
    }

    /// JPEG XL out: decoded back, the quadrants keep their colours, and q moves the bytes
    /// (75 by default, as SPEC says).
    @Test func jpegXLIsWrittenAndReadsBack() throws {
        let (img, rendered) = try thumb(source, "w=200&h=150&mode=fill&format=jxl")
        #expect(rendered.format == .jxl && img.width == 200 && img.height == 150)
        let reference = try thumb(source, "w=200&h=150&mode=fill&format=png").0
        var worst = 0
        for (x, y) in [(40, 30), (160, 30), (40, 120), (160, 120)] {
            for (a, b) in zip(img.pixel(x, y).prefix(3), reference.pixel(x, y).prefix(3)) {
                worst = max(worst, abs(Int(a) - Int(b)))
            }
        }
        #expect(worst <= 12, "the colours moved by \(worst) levels")
        let low = try thumb(source, "w=200&h=150&mode=fill&format=jxl&q=30").1.bytes.count
        let high = try thumb(source, "w=200&h=150&mode=fill&format=jxl&q=95").1.bytes.count
        #expect(low < rendered.bytes.count && rendered.bytes.count < high, "\(low) \(rendered.bytes.count) \(high)")
    }

    @Test(arguments: ImageFormat.allCases.filter { !$0.isVideo })
    func magicBytesMatchAndNoMetadataSurvives(format: ImageFormat) throws {
        #expect(
            try ImageFile.metadataFields(
                ImageFile.encode(Fixtures.quadrants(width: 8, height: 8), as: .jpeg, orientation: 1)
            ).contains("exif-data"),
            "the fixture must carry EXIF for this test to mean anything")
        let (img, rendered) = try thumb(source, "w=200&h=150&mode=fill&format=\(format.rawValue)")
        #expect(Self.magic(rendered.bytes) == format)
        #expect(img.width == 200 && img.height == 150)
        let fields = try ImageFile.metadataFields(rendered.bytes)
        // JPEG XL's codestream always states an orientation, and libvips' TIFF reader
        // always reports one, as a field: there it must be 1, upright as written.
        let states = format == .jxl || format == .tiff
        let banned = ["exif-data", "xmp-data", "iptc-data"] + (states ? [] : ["orientation"])
        if states {
            let fixtures = try Fixtures()
            let file = try fixtures.write("out.\(format.fileExtension)", rendered.bytes)
            #expect(try Thumbnailer(limits: ImagingLimits()).probe(path: file).orientation == 1)
        }
        for banned in banned {
            #expect(!fields.contains(banned), "\(format) output carries \(banned): \(fields)")
        }
        #expect(!fields.contains { $0.hasPrefix("exif-") || $0.hasPrefix("gps") }, "\(fields)")
        let text = String(decoding: rendered.bytes, as: UTF8.self)
        #expect(!text.contains("Exif\u{0}\u{0}") && !text.contains("x:xmpmeta"))
    }

    @Test func qualityChangesTheJpeg() throws {
        let low = try thumb(source, "w=200&h=150&format=jpeg&q=10").1.bytes.count
        let high = try thumb(source, "w=200&h=150&format=jpeg&q=95").1.bytes.count
        #expect(low < high)
    }

    /// A thumbnail up to 400 × 400 is a baseline JPEG (cheaper to encode, and it arrives
    /// whole in TCP's first flights); a larger one is progressive. Both have optimised
    /// Huffman tables: a baseline file written without them is larger.
    @Test func jpegIsBaselineUpTo160000PixelsThenProgressive() throws {
        // SOF2 (FF C2) marks a progressive JPEG; SOF0 (FF C0) a baseline one.
        func marker(_ bytes: [UInt8], _ m: UInt8) -> Bool {
            zip(bytes, bytes.dropFirst()).contains { $0 == 0xFF && $1 == m }
        }
        let small = try thumb(source, "w=400&h=400&mode=fill&upscale=1&format=jpeg").1
        #expect(small.plan.output.pixels() == 160_000)
        #expect(marker(small.bytes, 0xC0) && !marker(small.bytes, 0xC2))
        let large = try thumb(source, "w=401&h=400&mode=fill&upscale=1&format=jpeg").1
        #expect(marker(large.bytes, 0xC2) && !marker(large.bytes, 0xC0))
    }

    @Test func animatedSourcesGiveTheirFirstFrame() throws {
        // Two 100×100 frames stacked: red, then blue.
        let red = Array(repeating: Fixtures.red, count: 100 * 100).flatMap { $0 }
        let blue = Array(repeating: Fixtures.blue, count: 100 * 100).flatMap { $0 }
        let frames = RawImage(width: 100, height: 200, bands: 3, pixels: red + blue)
        for container in [ImageFile.Container.gif, .webp] {
            let path = try fixtures.write(
                "anim.\(container.rawValue)", ImageFile.encode(frames, as: container, pageHeight: 100))
            let (img, rendered) = try thumb(path, "w=50&format=png")
            #expect(rendered.plan.source == Size(width: 100, height: 100), "\(container)")
            #expect(img.width == 50 && img.height == 50)
            #expect(near(img.pixel(25, 40), Fixtures.red, 10), "\(container): \(img.pixel(25, 40))")
        }
    }
}

/// The service reads a worker's result's format and size from its first bytes (SPEC:
/// Isolation): every format the encoder writes, stills and animations, and bytes that are
/// no image at all give an answer or nil, never a trap.
@Suite struct ResultHeaderTests {
    @Test(arguments: ImageFormat.allCases.filter { !$0.isVideo })
    func everyFormatSaysItsSize(format: ImageFormat) throws {
        let fixtures = try Fixtures()
        let source = try fixtures.write(
            "q.png", ImageFile.encode(Fixtures.quadrants(width: 300, height: 200), as: .png))
        for (w, h) in [(200, 133), (37, 25), (1, 1)] {
            let (_, rendered) = try thumb(source, "w=\(w)&h=\(h)&mode=stretch&format=\(format.rawValue)")
            #expect(ResultHeader(rendered.bytes) == ResultHeader.expected(format, w, h), "\(format) \(w)×\(h)")
        }
    }

    /// A result whose header lies past its first 64 KiB: libtiff writes the directory after
    /// the pixels (a noisy picture's TIFF is large).
    @Test func aLargeTIFFSaysItsSize() throws {
        let fixtures = try Fixtures()
        var g = SeededRandom(seed: 0x71FF)
        let noise = RawImage(
            width: 400, height: 300, bands: 3,
            pixels: (0..<(400 * 300 * 3)).map { _ in UInt8.random(in: 0...255, using: &g) })
        let source = try fixtures.write("noise.png", ImageFile.encode(noise, as: .png))
        let (_, rendered) = try thumb(source, "w=400&format=tiff")
        #expect(rendered.bytes.count > 1 << 17)
        #expect(ResultHeader(rendered.bytes) == ResultHeader.expected(.tiff, 400, 300))
    }

    @Test func animationsSayTheirFrameSize() throws {
        let fixtures = try Fixtures()
        let frames = RawImage(width: 40, height: 90, bands: 3, pixels: [UInt8](repeating: 90, count: 40 * 90 * 3))
        let gif = try fixtures.write("a.gif", ImageFile.encode(frames, as: .gif, pageHeight: 30, delays: [50, 50, 50]))
        for format in [ImageFormat.webp, .gif] {
            let (_, rendered) = try thumb(gif, "w=20&format=\(format.rawValue)")
            #expect(ResultHeader(rendered.bytes) == ResultHeader.expected(format, 20, 15), "\(format)")
        }
    }

    /// JPEG XL in its container (as when copyright is kept), and the size in eighths.
    @Test func jpegXLInAContainer() throws {
        let fixtures = try Fixtures()
        let source = try fixtures.write(
            "c.jpg",
            ImageFile.encode(
                Fixtures.quadrants(width: 200, height: 100), as: .jpeg, exif: ["exif-ifd0-Copyright": "Jane"]))
        var limits = ImagingLimits()
        limits.keepCopyright = true
        for (w, h) in [(160, 80), (150, 75)] {
            let (_, rendered) = try thumb(source, "w=\(w)&h=\(h)&mode=stretch&format=jxl", limits: limits)
            #expect(ResultHeader(rendered.bytes) == ResultHeader.expected(.jxl, w, h), "\(w)×\(h)")
        }
    }

    @Test func anyBytesAreAnAnswerOrNil() {
        var g = SeededRandom(seed: 0x4EAD)
        let heads: [[UInt8]] = [
            [0xFF, 0xD8, 0xFF], [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], Array("GIF89a".utf8),
            Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8X".utf8), Array("II*\u{0}".utf8), Array("MM\u{0}*".utf8),
            [0, 0, 0, 0x1C] + Array("ftypavif".utf8), [0xFF, 0x0A],
        ]
        for i in 0..<20_000 {
            let head = heads[i % heads.count]
            let tail = (0..<Int.random(in: 0...64, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) }
            if let h = ResultHeader(head + tail), let s = h.size { #expect(s.width >= 1 && s.height >= 1) }
        }
        #expect(ResultHeader([UInt8]()) == nil && ResultHeader(Array("not an image".utf8)) == nil)
    }
}

extension ResultHeader {
    static func expected(_ format: ImageFormat, _ w: Int, _ h: Int) -> ResultHeader? {
        var r = ResultHeader([0xFF, 0xD8, 0xFF])
        r?.format = format
        r?.size = Size(width: w, height: h)
        return r
    }
}
