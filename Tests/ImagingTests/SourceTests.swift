import Core
import Foundation
import Imaging
import ImagingTestSupport
import TestSupport
import Testing

/// Orientation, colour, sizes against the plan, and sources that are not images.
@Suite struct SourceTests {
    let fixtures: Fixtures
    static let upright = Fixtures.quadrants(width: 200, height: 100)

    init() throws { fixtures = try Fixtures() }

    /// EXIF orientation → clockwise quarter turns that take upright to stored pixels.
    /// A viewer applies the tag to the stored pixels to show them upright: 6 rotates
    /// them 90° clockwise, so they are stored 90° counter-clockwise (3 turns).
    /// Under both shrink-on-load rules: at this 2× scale the fast one loads at 1/2,
    /// libvips' at full size.
    @Test(arguments: [(3, 2), (6, 3), (8, 1), (1, 0)], [true, false])
    func exifOrientationComesOutUpright(_ tag: (orientation: Int, turns: Int), fast: Bool) throws {
        let (orientation, turns) = tag
        let stored = Fixtures.rotated(Self.upright, turns: turns)
        let path = try fixtures.write(
            "o\(orientation).jpg", ImageFile.encode(stored, as: .jpeg, orientation: orientation))
        let (img, rendered) = try thumb(
            path, "w=100&format=png", limits: ImagingLimits(fastShrinkOnLoad: fast))
        #expect(rendered.plan.source == Size(width: 200, height: 100))
        #expect(img.width == 100 && img.height == 50)
        #expect(near(img.pixel(25, 12), Fixtures.red), "\(img.pixel(25, 12))")
        #expect(near(img.pixel(75, 12), Fixtures.green), "\(img.pixel(75, 12))")
        #expect(near(img.pixel(25, 37), Fixtures.blue), "\(img.pixel(25, 37))")
        #expect(near(img.pixel(75, 37), Fixtures.yellow), "\(img.pixel(75, 37))")
    }

    /// CIE76 ΔE between two sRGB colours.
    static func deltaE(_ a: [UInt8], _ b: [UInt8]) -> Double {
        func lab(_ c: [UInt8]) -> (Double, Double, Double) {
            func lin(_ v: UInt8) -> Double {
                let x = Double(v) / 255
                return x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4)
            }
            let (r, g, b) = (lin(c[0]), lin(c[1]), lin(c[2]))
            let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
            let y = 0.2126 * r + 0.7152 * g + 0.0722 * b
            let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
            func f(_ t: Double) -> Double { t > 0.008856 ? cbrt(t) : 7.787 * t + 16.0 / 116 }
            return (116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z)))
        }
        let (l1, a1, b1) = lab(a)
        let (l2, a2, b2) = lab(b)
        return ((l1 - l2) * (l1 - l2) + (a1 - a2) * (a1 - a2) + (b1 - b2) * (b1 - b2)).squareRoot()
    }

    /// Colours well inside a print gamut, so the round trip through CMYK keeps them
    /// (a saturated screen blue such as 70,90,180 is outside it and comes back duller).
    static let printable: [[UInt8]] = [[200, 80, 60], [60, 140, 90], [100, 120, 170], [220, 200, 80]]

    /// Every format of the default allow-list, read through the pipeline's own source
    /// (pread on the open file, with seeks for the containers that need them).
    @Test(arguments: [
        (ImageFile.Container.jpeg, "jpeg"), (.png, "png"), (.webp, "webp"), (.gif, "gif"), (.avif, "heif"),
        (.tiff, "tiff"),
    ])
    func everyDefaultSourceFormatIsRead(_ container: ImageFile.Container, _ format: String) throws {
        let bytes = try ImageFile.encode(
            Fixtures.quadrants(width: 120, height: 80, colours: Self.printable), as: container, quality: 90)
        let path = try fixtures.write("source.\(container.rawValue)", bytes)
        #expect(try Thumbnailer(limits: ImagingLimits()).probe(path: path).format == format)
        let (img, _) = try thumb(path, "w=60&ratio=1&mode=fill&format=png")
        #expect(img.width == 60 && img.height == 60)
        // The top-left quadrant's colour survives (GIF's palette and AVIF's loss allowed for).
        let px = img.pixel(10, 10)
        for (got, want) in zip(px, Self.printable[0]) { #expect(abs(Int(got) - Int(want)) < 40, "\(format): \(px)") }
    }

    /// Under both shrink-on-load rules, as above.
    @Test(arguments: [true, false])
    func cmykJpegComesOutSRGBWithTheRightColours(fast: Bool) throws {
        let bytes = try ImageFile.encode(
            Fixtures.quadrants(width: 200, height: 200, colours: Self.printable), as: .jpeg, cmyk: true)
        #expect(JPEGMarkers.components(bytes) == 4, "the fixture must really be a CMYK JPEG")
        let colours = Self.printable
        let path = try fixtures.write("cmyk.jpg", bytes)
        let t = try Thumbnailer(limits: ImagingLimits())
        #expect(try t.probe(path: path).format == "jpeg")
        let (img, rendered) = try thumb(path, "w=100&format=png", limits: ImagingLimits(fastShrinkOnLoad: fast))
        #expect(img.bands == 3, "sRGB without alpha")
        #expect(try ImageFile.metadataFields(rendered.bytes).contains("icc-profile-data") == false)
        for (i, (x, y)) in [(25, 25), (75, 25), (25, 75), (75, 75)].enumerated() {
            let got = img.pixel(x, y)
            let d = Self.deltaE(got, colours[i])
            #expect(d < 6, "quadrant \(i): \(got) vs \(colours[i]), ΔE \(d)")
        }
    }

    @Test func cmykWithoutAProfileIsStillConverted() throws {
        // The same, with the profile removed: libvips falls back to its CMYK profile.
        let colours = Self.printable
        let bytes = try ImageFile.encode(
            Fixtures.quadrants(width: 200, height: 200, colours: colours), as: .jpeg, cmyk: true)
        let stripped = JPEGMarkers.removingICC(bytes)
        #expect(try !ImageFile.metadataFields(stripped).contains("icc-profile-data"))
        let path = try fixtures.write("cmyk-noprofile.jpg", stripped)
        let (img, _) = try thumb(path, "w=100&format=png")
        for (i, (x, y)) in [(25, 25), (75, 25), (25, 75), (75, 75)].enumerated() {
            #expect(Self.deltaE(img.pixel(x, y), colours[i]) < 12, "quadrant \(i): \(img.pixel(x, y)) vs \(colours[i])")
        }
    }

    @Test func outputSizesEqualThePlanOnAGrid() throws {
        let sources = [
            try fixtures.write("l.jpg", ImageFile.encode(Fixtures.quadrants(width: 640, height: 360), as: .jpeg)),
            try fixtures.write("p.png", ImageFile.encode(Fixtures.quadrants(width: 300, height: 500), as: .png)),
            // Stored 360×640 with orientation 6: plans on 640×360.
            try fixtures.write(
                "r.jpg", ImageFile.encode(Fixtures.quadrants(width: 360, height: 640), as: .jpeg, orientation: 6)),
        ]
        let boxes = [
            "w=300&h=200", "w=100&ratio=1", "h=90&ratio=16:9", "w=123", "h=77", "ratio=3:1", "", "w=1&h=1", "w=999&h=7",
        ]
        let t = try Thumbnailer(limits: ImagingLimits())
        var checked = 0
        for src in sources {
            let info = try t.probe(path: src)
            for box in boxes {
                for mode in Mode.allCases {
                    for extra in ["", "&upscale=1", "&dpr=2"] {
                        let query =
                            [box, "mode=\(mode.rawValue)", "format=png"].filter { !$0.isEmpty }.joined(separator: "&")
                            + extra
                        let req = try request(query)
                        let plan = try Geometry.plan(source: info.size, request: req, limits: RequestLimits())
                        let rendered = try t.thumbnail(path: src, request: req, requestLimits: RequestLimits())
                        let img = try ImageFile.decode(rendered.bytes)
                        #expect(rendered.plan == plan)
                        #expect(Size(width: img.width, height: img.height) == plan.output, "\(src) \(query)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked >= 100)
    }

    static func typedError(_ body: () throws -> Void) -> ImagingError? {
        do {
            try body()
            return nil
        } catch let e as ImagingError {
            return e
        } catch {
            return nil
        }
    }

    @Test func corruptSourcesGiveTheTypedError() throws {
        let good = try ImageFile.encode(Fixtures.quadrants(width: 400, height: 300), as: .jpeg)
        let png = try ImageFile.encode(Fixtures.quadrants(width: 64, height: 64), as: .png)
        var brokenCRC = png
        // The IHDR chunk's CRC sits at bytes 29…32 of every PNG.
        brokenCRC[30] ^= 0xFF
        var brokenIDAT = png
        if let idat = JPEGMarkers.find(Array("IDAT".utf8), in: png) { brokenIDAT[idat + 8] ^= 0x5A }
        let cases: [(String, [UInt8])] = [
            ("truncated.jpg", Array(good.prefix(good.count / 2))),
            ("text.jpg", Array("this is not an image, only text named .jpg\n".utf8)),
            ("empty.jpg", []),
            ("crc.png", brokenCRC),
            ("idat.png", brokenIDAT),
            ("header-only.jpg", Array(good.prefix(200))),
        ]
        for (name, bytes) in cases {
            let path = try fixtures.write(name, bytes)
            let e = Self.typedError { _ = try thumb(path, "w=100&h=100&mode=fill") }
            #expect(e?.error.code == .unsupportedSource, "\(name): \(String(describing: e))")
            #expect(e?.error.message.contains("vips") == false, "the public message says no more than it must")
        }
        // The same pipeline still works afterwards: nothing global was left broken.
        let ok = try fixtures.write("good.jpg", good)
        #expect(try thumb(ok, "w=100").0.width == 100)
    }

    @Test func limitsAreCheckedFromTheHeaderBeforeDecoding() throws {
        // A 3000×3000 PNG of one colour: a few KB on disk, 9 MP decoded.
        let flat = RawImage(
            width: 3000, height: 3000, bands: 3, pixels: [UInt8](repeating: 200, count: 3000 * 3000 * 3))
        let path = try fixtures.write("bomb.png", ImageFile.encode(flat, as: .png))
        let small = try Thumbnailer(limits: ImagingLimits(maxSourceBytes: 50 << 20, maxSourcePixels: 1_000_000))
        let pixels = Self.typedError { _ = try small.probe(path: path) }
        #expect(pixels?.error.code == .sourceTooLarge && pixels?.stage == .limits)
        #expect(pixels?.error.message.contains("limits.maxSourcePixels 1000000") == true)

        let tiny = try Thumbnailer(limits: ImagingLimits(maxSourceBytes: 100, maxSourcePixels: 50_000_000))
        let bytes = Self.typedError { _ = try tiny.probe(path: path) }
        #expect(
            bytes?.error.code == .sourceTooLarge && bytes?.error.message.contains("limits.maxSourceBytes 100") == true)

        let missing = Self.typedError {
            _ = try small.probe(path: fixtures.dir.appendingPathComponent("nope.jpg").path)
        }
        #expect(missing?.error.code == .notFound)
        let folder = Self.typedError { _ = try small.probe(path: fixtures.dir.path) }
        #expect(folder?.error.code == .notFound)
    }

    @Test func onlyConfiguredFormatsAreLoaded() throws {
        let svg =
            #"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>"#
        let path = try fixtures.write("a.svg", Array(svg.utf8))
        // SVG is decoded by default; a list without it refuses it, naming what it decodes.
        #expect(try Thumbnailer(limits: ImagingLimits()).probe(path: path).format == "svg")
        let noSVG = try Thumbnailer(limits: ImagingLimits(formats: ["jpeg", "png"]))
        let e = Self.typedError { _ = try noSVG.probe(path: path) }
        #expect(
            e?.error.code == .unsupportedSource && e?.error.message.contains("the source is svg") == true
                && e?.error.message.contains("it decodes jpeg, png") == true, "\(String(describing: e))")
        let png = try fixtures.write("a.png", ImageFile.encode(Fixtures.quadrants(width: 8, height: 8), as: .png))
        let onlyJPEG = try Thumbnailer(limits: ImagingLimits(formats: ["jpeg"]))
        #expect(Self.typedError { _ = try onlyJPEG.probe(path: png) }?.error.code == .unsupportedSource)
    }

    @Test func anUpscaleThatWouldMakeAHugeIntermediateIsRefused() throws {
        let thin = try fixtures.write(
            "thin.png", ImageFile.encode(Fixtures.quadrants(width: 2, height: 4000), as: .png))
        let e = Self.typedError { _ = try thumb(thin, "w=4096&h=4096&mode=fill&upscale=1") }
        #expect(
            e?.error.code == .badParam && e?.error.message.contains("upscale=0") == true, "\(String(describing: e))")
    }
}

/// Byte-level helpers for fixtures.
enum JPEGMarkers {
    static func find(_ needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard needle.count <= bytes.count else { return nil }
        for i in 0...(bytes.count - needle.count) where bytes[i..<i + needle.count].elementsEqual(needle) { return i }
        return nil
    }

    /// The header segments before the scan: marker and the segment's bytes.
    static func segments(_ jpeg: [UInt8]) -> (list: [(marker: UInt8, bytes: ArraySlice<UInt8>)], scan: Int) {
        var list: [(marker: UInt8, bytes: ArraySlice<UInt8>)] = []
        var i = 2
        while i + 4 <= jpeg.count, jpeg[i] == 0xFF, jpeg[i + 1] != 0xDA {
            let length = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
            list.append((jpeg[i + 1], jpeg[i..<min(jpeg.count, i + 2 + length)]))
            i += 2 + length
        }
        return (list, min(i, jpeg.count))
    }

    /// The number of colour components in the frame header (SOF0 or SOF2).
    static func components(_ jpeg: [UInt8]) -> Int? {
        segments(jpeg).list.first { $0.marker == 0xC0 || $0.marker == 0xC2 }.map {
            Int($0.bytes[$0.bytes.startIndex + 9])
        }
    }

    /// Removes every APP2 (ICC profile) segment.
    static func removingICC(_ jpeg: [UInt8]) -> [UInt8] {
        let (list, scan) = segments(jpeg)
        return Array(jpeg.prefix(2)) + list.filter { $0.marker != 0xE2 }.flatMap { $0.bytes } + jpeg[scan...]
    }
}
