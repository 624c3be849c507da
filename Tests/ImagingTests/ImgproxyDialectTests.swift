import Core
import Foundation
import Imaging
import ImagingTestSupport
import Imgproxy
import Syscalls
import Testing

/// imgproxy URLs rendered by the real pipeline as the service renders them: parsed from
/// the path as sent, settled by the source's header, then rendered (SPEC: imgproxy URLs).
func dialect(_ path: String, _ options: String, limits: ImagingLimits = ImagingLimits()) throws -> (
    RawImage, Thumbnailer.Rendered
) {
    let requestLimits = RequestLimits()
    let url = try ImgproxyURL.parse(
        path: "/insecure/\(options)/plain/source", settings: ImgproxyURL.Settings(root: .folder("/")),
        limits: requestLimits, now: 0)
    let t = try Thumbnailer(limits: limits)
    let header = try t.header(file: openFile(path), reading: url.request.reading)
    let request = ImgproxyURL.settle(url.request, source: header, limits: requestLimits)
    let rendered = try t.thumbnail(file: openFile(path), request: request, requestLimits: requestLimits)
    return (try ImageFile.decode(rendered.bytes), rendered)
}

/// imgproxy's `TestTrim` tables (`processing/trim_test.go`), on drawings of its three
/// reference images (`testdata/trim1.png` … `trim3.png`, read off imgproxy's repository:
/// the rectangles' places and colours, not the files), with the sizes imgproxy answers.
@Suite struct ImgproxyTrimTests {
    /// trim1.png: 350×250 grey, white (255) round nested rectangles of 204, 153, 102, 51
    /// and 0; rectangle k spans x 10k ..< 350 − 20k and y 10k ..< 250 − 20k, so each cut
    /// is 10 pixels on the left and top and 20 on the right and bottom.
    static func nested() -> RawImage {
        var image = RawImage(width: 350, height: 250, filledWith: [255, 255, 255])
        for k in 1...5 {
            let v = UInt8(255 - 51 * k)
            for y in (10 * k)..<(250 - 20 * k) {
                for x in (10 * k)..<(350 - 20 * k) {
                    image.pixels.replaceSubrange((y * 350 + x) * 3..<((y * 350 + x) * 3 + 3), with: [v, v, v])
                }
            }
        }
        return image
    }

    /// trim2.png: 200×200, rows 0–29 red, 30–129 green, 130–199 blue. trim3.png: the
    /// same with the blue rows transparent.
    static func bands(transparentBottom: Bool) -> RawImage {
        var pixels: [UInt8] = []
        for y in 0..<200 {
            let c: [UInt8] =
                y < 30
                ? [255, 0, 0, 255] : y < 130 ? [0, 255, 0, 255] : transparentBottom ? [0, 0, 0, 0] : [0, 0, 255, 255]
            for _ in 0..<200 { pixels += c }
        }
        return RawImage(width: 200, height: 200, bands: 4, pixels: pixels)
    }

    /// (image, options, width, height): TestThreshold, TestColor, TestAlpha.
    static let cases: [(String, String, Int, Int)] = [
        ("trim1", "t:5", 320, 220), ("trim1", "t:100", 290, 190), ("trim1", "t:150", 260, 160),
        ("trim1", "t:200", 230, 130), ("trim1", "t:220", 200, 100), ("trim1", "t:0:ff0000", 350, 250),
        ("trim1", "t:5::1", 330, 220), ("trim1", "t:5:::1", 320, 230), ("trim1", "t:5::1:1", 330, 230),
        ("trim2", "t:1", 200, 170), ("trim2", "t:1:ff0000", 200, 170), ("trim2", "t:1:0000ff", 200, 130),
        ("trim2", "t:1:ffffff", 200, 200), ("trim3", "t:1:ff00ff", 200, 130),
        // imgproxy's docs' example: threshold, colour, equal_hor, equal_ver.
        ("trim1", "trim:10:ffffff:1:0", 330, 220),
    ]

    @Test(arguments: cases)
    func imgproxysTrimSizes(image: String, options: String, width: Int, height: Int) throws {
        let fixtures = try Fixtures()
        let raw = image == "trim1" ? Self.nested() : Self.bands(transparentBottom: image == "trim3")
        let path = try fixtures.write("\(image).png", ImageFile.encode(raw, as: .png))
        let (img, rendered) = try dialect(path, options)
        #expect(rendered.format == .png, "a PNG stays a PNG")
        #expect(img.width == width && img.height == height, "\(image) \(options): \(img.width)×\(img.height)")
    }
}

/// `auto_rotate:0`, `keep_copyright` per request, sizes to the pixel after JPEG
/// shrink-on-load, and the source's format kept.
@Suite struct ImgproxyRenderTests {
    @Test func autoRotateOffKeepsTheStoredOrientation() throws {
        let fixtures = try Fixtures()
        // Stored 200×100, EXIF orientation 6: upright it is 100×200.
        let path = try fixtures.write(
            "turned.jpg", ImageFile.encode(Fixtures.quadrants(width: 200, height: 100), as: .jpeg, orientation: 6))
        let (upright, _) = try dialect(path, "w:50")
        #expect(upright.width == 50 && upright.height == 100)
        let (stored, _) = try dialect(path, "ar:0/w:50")
        #expect(stored.width == 50 && stored.height == 25)
        // As stored: red top left, yellow bottom right (within JPEG's error).
        let expected = [Fixtures.red, Fixtures.green, Fixtures.blue, Fixtures.yellow]
        #expect(
            zip(quadrantCentres(stored), expected).allSatisfy { got, want in
                zip(got, want).allSatisfy { abs(Int($0) - Int($1)) <= 12 }
            }, "\(quadrantCentres(stored))")
    }

    @Test func keepCopyrightIsPerRequest() throws {
        let fixtures = try Fixtures()
        let path = try KeepCopyrightTests.source(fixtures)
        let kept = try dialect(path, "kcr:1/w:100").1.bytes
        #expect(try ImageFile.metadataText(kept, "exif-ifd0-Copyright")?.hasPrefix("Jane Doe 2026") == true)
        let dropped = try dialect(path, "kcr:0/w:100").1.bytes
        #expect(try ImageFile.metadataText(dropped, "exif-ifd0-Copyright") == nil)
        // kcr:0 on a server that keeps it: stripped.
        var keeping = ImagingLimits()
        keeping.keepCopyright = true
        let url = try ImgproxyURL.parse(
            path: "/insecure/kcr:0/w:100/plain/a.jpg",
            settings: ImgproxyURL.Settings(root: .folder("/"), keepCopyright: true), limits: RequestLimits(), now: 0)
        #expect(url.request.keepCopyright == false)
        var request = url.request
        request.format = .jpeg
        let off = try Thumbnailer(limits: keeping).thumbnail(
            file: openFile(path), request: request, requestLimits: RequestLimits())
        #expect(try ImageFile.metadataText(off.bytes, "exif-ifd0-Copyright") == nil)
    }

    /// A 640×427 JPEG, decoded by shrink-on-load (1/8 for w:50): imgproxy's size at every
    /// width from 20 to 320, which is its planner's, and the native `w=N`'s too: N wide.
    @Test func sizesToThePixelAfterShrinkOnLoad() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.write(
            "land.jpg", ImageFile.encode(Fixtures.quadrants(width: 640, height: 427), as: .jpeg))
        let source = Size(width: 640, height: 427)
        for n in stride(from: 20, through: 320, by: 3) {
            let (img, _) = try dialect(path, "w:\(n)")
            var g = ImgproxyGeometry()
            g.width = n
            let theirs = try g.plan(
                source: source, request: ThumbRequest(src: "x"), isVector: false, limits: RequestLimits())
            #expect(img.width == n && Size(width: img.width, height: img.height) == theirs.output, "w:\(n)")
            let (native, _) = try thumb(path, "w=\(n)&format=png")
            #expect(native.width == img.width && native.height == img.height, "w=\(n)")
        }
    }

    @Test func theSourcesFormatIsKept() throws {
        let fixtures = try Fixtures()
        let raw = Fixtures.quadrants(width: 120, height: 80)
        for (name, container, expected) in [
            ("a.png", ImageFile.Container.png, ImageFormat.png), ("a.jpg", .jpeg, .jpeg), ("a.webp", .webp, .jpeg),
        ] {
            let path = try fixtures.write(name, ImageFile.encode(raw, as: container))
            #expect(try dialect(path, "w:60").1.format == expected, "\(name)")
        }
        let alpha = try fixtures.write(
            "alpha.webp", ImageFile.encode(RawImage(width: 40, height: 40, filledWith: [0, 0, 255, 128]), as: .webp))
        #expect(try dialect(alpha, "w:20").1.format == .png, "a WebP with alpha is a PNG, as imgproxy makes it")
        #expect(try dialect(alpha, "w:20/f:webp").1.format == .webp)
    }
}
