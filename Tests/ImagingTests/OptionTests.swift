import Core
import Foundation
import Imaging
import ImagingTestSupport
import TestSupport
import Testing

/// `crop`, `rotate`, `flip`, `blur`, `sharpen`, `extend`, `pixelate` and `padding` on
/// synthetic sources, by their pixels.
@Suite struct OptionTests {
    let fixtures: Fixtures
    let landscape: String  // 400×200: red | green over blue | yellow

    init() throws {
        fixtures = try Fixtures()
        landscape = try fixtures.write(
            "landscape.png", ImageFile.encode(Fixtures.quadrants(width: 400, height: 200), as: .png))
    }

    static let r = Fixtures.red, g = Fixtures.green, b = Fixtures.blue, y = Fixtures.yellow

    /// Each region keeps its quadrant, at the region's own ratio.
    static let regions: [(String, [UInt8])] = [
        ("0,0,0.5,0.5", r), ("0.5,0,0.5,0.5", g), ("0,0.5,0.5,0.5", b), ("0.5,0.5,0.5,0.5", y),
    ]

    @Test(arguments: regions)
    func aRegionKeepsItsQuadrant(region: String, colour: [UInt8]) throws {
        let (img, rendered) = try thumb(landscape, "crop=\(region)&w=50&format=png")
        #expect(img.width == 50 && img.height == 25, "the region is 200×100")
        #expect(rendered.plan.source == Size(width: 200, height: 100))
        #expect(quadrantCentres(img).allSatisfy { $0 == colour }, "\(quadrantCentres(img))")
    }

    /// A quarter turn moves red from top left to top right; flips mirror; rotate after crop.
    static let turns: [(String, [[UInt8]], (Int, Int))] = [
        ("rotate=90", [b, r, y, g], (50, 100)), ("rotate=180", [y, b, g, r], (100, 50)),
        ("rotate=270", [g, y, r, b], (50, 100)), ("flip=h", [g, r, y, b], (100, 50)),
        ("flip=v", [b, y, r, g], (100, 50)), ("flip=hv", [y, b, g, r], (100, 50)),
        ("crop=0,0,0.5,1&rotate=90", [b, r, b, r], (50, 50)),
    ]

    @Test(arguments: turns)
    func rotationAndFlipMoveTheCorners(query: String, expected: [[UInt8]], size: (Int, Int)) throws {
        let box = size.0 == 50 ? "w=50" : "w=100"
        let (img, _) = try thumb(landscape, "\(query)&\(box)&format=png")
        #expect(img.width == size.0 && img.height == size.1, "\(img.width)×\(img.height)")
        #expect(quadrantCentres(img) == expected, "\(query): \(quadrantCentres(img))")
    }

    /// Blur lowers an edge's contrast: the largest step between neighbours across a
    /// black-white edge drops from 255 to under 60 with σ = 4. Sharpening overshoots on
    /// both sides of an edge between two greys (64 | 192): darker than 60 and lighter than
    /// 196 next to it, the unsharp mask's mark; without it, the row holds the two greys.
    @Test func blurSoftensAnEdgeAndSharpenOvershootsIt() throws {
        func image(_ name: String, _ left: UInt8, _ right: UInt8) throws -> String {
            var pixels: [UInt8] = []
            for _ in 0..<100 { for x in 0..<200 { pixels += x < 100 ? [left, left, left] : [right, right, right] } }
            return try fixtures.write(
                name, ImageFile.encode(RawImage(width: 200, height: 100, bands: 3, pixels: pixels), as: .png))
        }
        func row(_ path: String, _ query: String) throws -> [Int] {
            let (img, _) = try thumb(path, query + "&format=png")
            return (0..<img.width).map { Int(img.pixel($0, 50)[0]) }
        }
        func steepest(_ values: [Int]) -> Int { (1..<values.count).map { abs(values[$0] - values[$0 - 1]) }.max() ?? 0 }
        let edge = try image("edge.png", 0, 255)
        #expect(steepest(try row(edge, "w=200")) == 255)
        let blurred = steepest(try row(edge, "w=200&blur=4"))
        #expect(blurred < 60, "\(blurred)")

        let greys = try image("greys.png", 64, 192)
        let plain = try row(greys, "w=200")
        #expect(plain.min() == 64 && plain.max() == 192)
        let sharp = try row(greys, "w=200&sharpen=2")
        #expect((sharp.min() ?? 64) < 60 && (sharp.max() ?? 192) > 196, "\(sharp[90..<110])")
    }

    // `extend`, `pixelate` and `padding` by their pixels (SPEC: "After it").

    @Test func extendPlacesTheImageOnTheBoxInBg() throws {
        let (img, rendered) = try thumb(landscape, "w=800&h=400&extend=1&bg=000000&format=png")
        #expect(
            img.width == 800 && img.height == 400
                && rendered.plan.extended == Rect(x: 200, y: 100, width: 400, height: 200))
        #expect(img.pixel(10, 10).prefix(3).elementsEqual([0, 0, 0]))
        #expect(img.pixel(300, 150).prefix(3).elementsEqual(Fixtures.red))
        #expect(img.pixel(500, 250).prefix(3).elementsEqual(Fixtures.yellow))
        // Without bg, transparent where the format has alpha.
        let (clear, _) = try thumb(landscape, "w=800&h=400&extend=1&format=png")
        #expect(clear.bands == 4 && clear.pixel(10, 10)[3] == 0 && clear.pixel(300, 150)[3] == 255)
    }

    @Test func pixelateMakesUniformBlocks() throws {
        // A ramp, so that every block differs from its neighbours.
        var px: [UInt8] = []
        for y in 0..<64 { for x in 0..<100 { px += [UInt8(x * 2), UInt8(y * 3), 128] } }
        let ramp = try fixtures.write(
            "ramp.png", ImageFile.encode(RawImage(width: 100, height: 64, bands: 3, pixels: px), as: .png))
        let (img, _) = try thumb(ramp, "pixelate=8&format=png")
        #expect(img.width == 100 && img.height == 64)
        for by in 0..<8 {
            for bx in 0..<13 {
                let first = img.pixel(bx * 8, by * 8)
                for y in (by * 8)..<min(64, by * 8 + 8) {
                    for x in (bx * 8)..<min(100, bx * 8 + 8) where img.pixel(x, y) != first {
                        Issue.record("block \(bx),\(by) is not uniform at \(x),\(y)")
                        return
                    }
                }
            }
        }
        #expect(img.pixel(0, 0) != img.pixel(8, 0) && img.pixel(0, 0) != img.pixel(0, 8))
    }

    @Test func paddingFramesTheShapedResult() throws {
        let (img, rendered) = try thumb(
            landscape, "w=100&h=100&mode=fill&shape=circle&padding=10,0,20,5&bg=0000ff&format=png")
        #expect(img.width == 105 && img.height == 130 && rendered.plan.output == Size(width: 105, height: 130))
        // The margin is bg, on every side as asked; inside it, the circle.
        #expect(img.pixel(2, 60).prefix(3).elementsEqual([0, 0, 255]))
        #expect(img.pixel(50, 125).prefix(3).elementsEqual([0, 0, 255]))
        #expect(img.pixel(30, 40).prefix(3).elementsEqual(Fixtures.red), "\(img.pixel(30, 40))")
        let (clear, _) = try thumb(landscape, "w=100&h=100&mode=fill&shape=circle&padding=10&format=png")
        #expect(clear.width == 120 && clear.pixel(3, 3)[3] == 0 && clear.pixel(12, 12)[3] == 0)
        #expect(clear.pixel(60, 60)[3] == 255)
    }
}

/// `maxbytes` (SPEC): the quality is lowered until the result fits, never below 10; when
/// even that does not fit, the smallest result made; PNG has no quality to lower.
@Suite struct MaxBytesTests {
    let fixtures: Fixtures
    let noise: String

    init() throws {
        fixtures = try Fixtures()
        var g = SeededRandom(seed: 7)
        let px = (0..<(320 * 240 * 3)).map { _ in UInt8.random(in: 0...255, using: &g) }
        noise = try fixtures.write(
            "noise.png", ImageFile.encode(RawImage(width: 320, height: 240, bands: 3, pixels: px), as: .png))
    }

    @Test(arguments: [ImageFormat.jpeg, .webp])
    func theResultFitsAtALowerQuality(format: ImageFormat) throws {
        let full = try thumb(noise, "format=\(format.rawValue)").1.bytes.count
        let budget = full / 2
        let (img, rendered) = try thumb(noise, "format=\(format.rawValue)&maxbytes=\(budget)")
        #expect(rendered.bytes.count <= budget && rendered.format == format, "\(rendered.bytes.count) > \(budget)")
        #expect(img.width == 320 && img.height == 240)
        // Not needlessly low: the floor's result is smaller still.
        let floor = try thumb(noise, "format=\(format.rawValue)&q=10").1.bytes.count
        #expect(floor < rendered.bytes.count)
    }

    @Test func whenNothingFitsTheSmallestIsServed() throws {
        let floor = try thumb(noise, "format=jpeg&q=10").1.bytes
        let rendered = try thumb(noise, "format=jpeg&maxbytes=1024").1
        #expect(floor.count > 1024 && rendered.bytes == floor)
    }

    @Test func aResultThatFitsIsUntouchedAndPNGHasNoQuality() throws {
        let plain = try thumb(noise, "format=jpeg&w=32").1.bytes
        #expect(try thumb(noise, "format=jpeg&w=32&maxbytes=1000000").1.bytes == plain)
        let png = try thumb(noise, "format=png").1.bytes
        #expect(try thumb(noise, "format=png&maxbytes=1024").1.bytes == png)
    }
}

/// `output.keepCopyright` (SPEC: Colour and metadata): the source's EXIF Copyright and
/// Artist and XMP dc:rights and dc:creator are kept where the format carries them, and
/// nothing else (never GPS); off (the default), nothing at all.
@Suite struct KeepCopyrightTests {
    static let xmp = """
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
        <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xmp="http://ns.adobe.com/xap/1.0/">\
        <dc:rights><rdf:Alt><rdf:li xml:lang="x-default">© 2026 Jane &amp; Co</rdf:li></rdf:Alt></dc:rights>\
        <dc:creator><rdf:Seq><rdf:li>Jane Doe</rdf:li><rdf:li>Joe Roe</rdf:li></rdf:Seq></dc:creator>\
        <xmp:CreatorTool>SecretCam 3</xmp:CreatorTool><dc:description>where I live</dc:description>\
        </rdf:Description></rdf:RDF></x:xmpmeta>
        """

    static func source(_ fixtures: Fixtures) throws -> String {
        try fixtures.write(
            "signed.jpg",
            ImageFile.encode(
                Fixtures.quadrants(width: 200, height: 100), as: .jpeg,
                exif: [
                    "exif-ifd0-Copyright": "Jane Doe 2026", "exif-ifd0-Artist": "Jane Doe",
                    "exif-ifd0-Make": "SecretCam", "exif-ifd3-GPSLatitudeRef": "N",
                ], xmp: xmp))
    }

    @Test(arguments: [ImageFormat.jpeg, .webp, .avif])
    func copyrightAndArtistAreKeptAndNothingElse(format: ImageFormat) throws {
        let fixtures = try Fixtures()
        let path = try Self.source(fixtures)
        // The fixture does carry all of it.
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(try ImageFile.metadataText(original, "exif-ifd3-GPSLatitudeRef") != nil)
        var limits = ImagingLimits()
        limits.keepCopyright = true
        let out = try thumb(path, "w=100&format=\(format.rawValue)", limits: limits).1.bytes
        #expect(try ImageFile.metadataText(out, "exif-ifd0-Copyright")?.hasPrefix("Jane Doe 2026") == true)
        #expect(try ImageFile.metadataText(out, "exif-ifd0-Artist")?.hasPrefix("Jane Doe") == true)
        for gone in ["exif-ifd3-GPSLatitudeRef", "exif-ifd0-Make"] {
            #expect(try ImageFile.metadataText(out, gone) == nil, "\(format): \(gone) kept")
        }
        let packet = try #require(try ImageFile.metadataText(out, "xmp-data"))
        #expect(packet.contains("© 2026 Jane &amp; Co") && packet.contains("<rdf:li>Joe Roe</rdf:li>"), "\(packet)")
        #expect(!packet.contains("SecretCam") && !packet.contains("where I live"))
        // Off: nothing at all.
        let plain = try thumb(path, "w=100&format=\(format.rawValue)").1.bytes
        let fields = try ImageFile.metadataFields(plain)
        #expect(!fields.contains { $0.hasPrefix("exif-") || $0 == "xmp-data" }, "\(fields)")
    }

    @Test func pngCarriesTheXMP() throws {
        let fixtures = try Fixtures()
        var limits = ImagingLimits()
        limits.keepCopyright = true
        let out = try thumb(try Self.source(fixtures), "w=100&format=png", limits: limits).1.bytes
        #expect(try ImageFile.metadataText(out, "xmp-data")?.contains("Jane Doe") == true)
        #expect(try ImageFile.metadataText(out, "exif-ifd3-GPSLatitudeRef") == nil)
    }
}

/// `trim` (SPEC: Before the geometry): the border within `trim` levels of the top-left
/// pixel is cut away before `crop` and the geometry; a source all border stays whole.
@Suite struct TrimTests {
    /// width × height of `border`, with a `block`-coloured rectangle at `rect`.
    static func framed(_ w: Int, _ h: Int, border: [UInt8], block: [UInt8], _ rect: Rect) -> RawImage {
        var image = RawImage(width: w, height: h, filledWith: border)
        for y in rect.y..<(rect.y + rect.height) {
            let row = (y * w + rect.x) * 3
            image.pixels.replaceSubrange(
                row..<(row + rect.width * 3), with: Array([[UInt8]](repeating: block, count: rect.width).joined()))
        }
        return image
    }

    @Test func theBorderIsCutAwayBeforeTheGeometry() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.write(
            "framed.png",
            ImageFile.encode(
                Self.framed(
                    400, 300, border: [255, 255, 255], block: Fixtures.red, Rect(x: 50, y: 60, width: 200, height: 100)),
                as: .png))
        let (img, rendered) = try thumb(path, "trim=0&w=100&format=png")
        #expect(rendered.plan.source == Size(width: 200, height: 100) && img.width == 100 && img.height == 50)
        #expect(
            img.pixel(1, 1).prefix(3).elementsEqual(Fixtures.red)
                && img.pixel(98, 48).prefix(3).elementsEqual(Fixtures.red))
        // crop is of the trimmed image.
        let (left, cut) = try thumb(path, "trim=0&crop=0,0,0.5,1&format=png")
        #expect(
            cut.plan.source == Size(width: 100, height: 100) && left.pixel(50, 50).prefix(3).elementsEqual(Fixtures.red)
        )
        // Without trim: the whole frame.
        #expect(try thumb(path, "w=100&format=png").1.plan.source == Size(width: 400, height: 300))
    }

    @Test func theThresholdCountsLevels() throws {
        let fixtures = try Fixtures()
        // A border of two near-whites: within 10 levels of the corner, not within 2.
        var image = Self.framed(
            300, 200, border: [250, 250, 250], block: Fixtures.blue, Rect(x: 100, y: 50, width: 100, height: 100))
        // Three rows of 244: find_trim smooths away a single-pixel line as noise.
        for y in 186..<189 {
            for x in 0..<300 {
                image.pixels.replaceSubrange((y * 300 + x) * 3..<((y * 300 + x) * 3 + 3), with: [244, 244, 244])
            }
        }
        let path = try fixtures.write("near.png", ImageFile.encode(image, as: .png))
        #expect(try thumb(path, "trim=10&format=png").1.plan.source == Size(width: 100, height: 100))
        #expect(try thumb(path, "trim=2&format=png").1.plan.source.height > 100)
    }

    @Test func allBorderIsLeftWholeAndAnimationsAre400() throws {
        let fixtures = try Fixtures()
        let flat = try fixtures.write(
            "flat.png", ImageFile.encode(RawImage(width: 60, height: 40, filledWith: Fixtures.green), as: .png))
        #expect(try thumb(flat, "trim=0&format=png").1.plan.source == Size(width: 60, height: 40))
        let frames = RawImage(width: 20, height: 40, filledWith: Fixtures.red)
        let gif = try fixtures.write("a.gif", ImageFile.encode(frames, as: .gif, pageHeight: 20, delays: [100, 100]))
        #expect {
            _ = try thumb(gif, "trim=0&w=10")
        } throws: { error in
            (error as? ImagingError)?.error.message.contains("trim applies to still images") == true
        }
    }
}
