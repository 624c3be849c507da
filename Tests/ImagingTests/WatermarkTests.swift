import Core
import Foundation
import Imaging
import ImagingTestSupport
import TestSupport
import Testing

/// `wm` (SPEC: Watermarks) by its pixels: where it sits, how large, how opaque, and that
/// it comes after the effects and before the shape.
@Suite struct WatermarkTests {
    let fixtures: Fixtures
    let white: String  // 400×200, white
    var thumbnailer: Thumbnailer
    let mark: WatermarkImage

    /// The watermark: 100×50, its left half opaque red, its right half transparent.
    init() throws {
        fixtures = try Fixtures()
        white = try fixtures.write(
            "white.png", ImageFile.encode(RawImage(width: 400, height: 200, filledWith: [255, 255, 255]), as: .png))
        var pixels: [UInt8] = []
        for _ in 0..<50 { for x in 0..<100 { pixels += x < 50 ? [255, 0, 0, 255] : [0, 0, 255, 0] } }
        let logo = try fixtures.write(
            "logo.png", ImageFile.encode(RawImage(width: 100, height: 50, bands: 4, pixels: pixels), as: .png))
        thumbnailer = try Thumbnailer(limits: ImagingLimits())
        mark = try thumbnailer.watermark(path: logo)
        thumbnailer.watermarks["logo"] = mark
    }

    func render(_ query: String, _ spec: Watermark) throws -> RawImage {
        var marked = spec
        marked.size = mark.size
        let limits = RequestLimits(watermarks: ["logo": marked])
        let request = try ThumbRequest.parse(query: "src=x&wm=logo&format=png&" + query, limits: limits)
        let rendered = try thumbnailer.thumbnail(path: white, request: request, requestLimits: limits)
        return try ImageFile.decode(rendered.bytes)
    }

    func rgb(_ img: RawImage, _ x: Int, _ y: Int) -> [Int] { img.pixel(x, y).prefix(3).map { Int($0) } }

    @Test func theImageIsReadUprightWithAlpha() {
        #expect(mark.size == Size(width: 100, height: 50))
        #expect(Array(mark.rgba[0..<4]) == [255, 0, 0, 255])
        #expect(mark.rgba[(50 * 4) + 3] == 0, "the right half is transparent")
    }

    /// scale 0.25 of 400 wide: 100×50; southeast with a margin of 10: at (290, 140).
    @Test func itIsScaledAndPlacedByPosition() throws {
        let img = try render("w=400", Watermark(src: "logo.png", position: .southeast, scale: 0.25, margin: 10))
        #expect(img.width == 400 && img.height == 200)
        #expect(rgb(img, 291, 141) == [255, 0, 0], "the red half's top-left corner")
        #expect(rgb(img, 339, 189) == [255, 0, 0], "the red half's bottom-right corner")
        #expect(rgb(img, 289, 160) == [255, 255, 255], "left of it")
        #expect(rgb(img, 310, 138) == [255, 255, 255], "above it")
        #expect(rgb(img, 310, 191) == [255, 255, 255], "the margin below it")
        #expect(rgb(img, 370, 160) == [255, 255, 255], "the transparent half shows the picture")

        let northwest = try render("w=400", Watermark(src: "logo.png", position: .northwest, scale: 0.5))
        #expect(rgb(northwest, 0, 0) == [255, 0, 0] && rgb(northwest, 99, 99) == [255, 0, 0])
        #expect(rgb(northwest, 101, 50) == [255, 255, 255] && rgb(northwest, 50, 101) == [255, 255, 255])
    }

    /// The margin is in CSS pixels: at dpr 2 it is 20 device pixels, as the size doubles.
    @Test func theMarginFollowsTheDPR() throws {
        let img = try render("w=200&dpr=2", Watermark(src: "logo.png", position: .southwest, scale: 0.25, margin: 10))
        #expect(img.width == 400)
        #expect(rgb(img, 21, 131) == [255, 0, 0] && rgb(img, 19, 160) == [255, 255, 255])
        #expect(rgb(img, 40, 179) == [255, 0, 0] && rgb(img, 40, 181) == [255, 255, 255])
    }

    /// Opacity 0.5 of red over white: (255, 128, 128), within rounding.
    @Test func opacityBlendsIt() throws {
        let img = try render("w=400", Watermark(src: "logo.png", position: .center, opacity: 0.5, scale: 0.25))
        let p = rgb(img, 170, 100)
        #expect(p[0] == 255 && abs(p[1] - 128) <= 2 && abs(p[2] - 128) <= 2, "\(p)")
    }

    /// After pixelate, before the shape: a watermark in the corner of a circle is clipped
    /// away with it, and keeps its sharp edge (it was not pixelated).
    @Test func itComesAfterTheEffectsAndBeforeTheShape() throws {
        let spec = Watermark(src: "logo.png", position: .southeast, scale: 0.5)
        let circle = try render("w=200&h=200&mode=fill&shape=circle", spec)
        #expect(circle.bands == 4 && circle.pixel(199, 199)[3] == 0, "the corner is clipped")
        #expect(Array(circle.pixel(130, 160)) == [255, 0, 0, 255], "inside the circle it shows")
        let blocks = try render("w=400&pixelate=32", Watermark(src: "logo.png", position: .northwest, scale: 0.1))
        // 40×20 at the top left, sharp: pixelated, the 32-pixel block over it would be one pink.
        #expect(rgb(blocks, 5, 5) == [255, 0, 0] && rgb(blocks, 5, 25) == [255, 255, 255])
        #expect(rgb(blocks, 15, 10) == [255, 0, 0] && rgb(blocks, 24, 10) == [255, 255, 255])
    }

    /// A canvas too short for the scaled watermark: it is made smaller to fit, in its ratio.
    @Test func aShortCanvasShrinksIt() {
        let p = Watermark(src: "logo.png", scale: 1).placement(
            name: "logo", size: Size(width: 100, height: 50), on: Size(width: 400, height: 100), dpr: 1)
        #expect(p.rect == Rect(x: 200, y: 0, width: 200, height: 100))
    }
}
