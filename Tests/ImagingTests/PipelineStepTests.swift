import CVips
import Core
import Foundation
import TestSupport
import Testing

@testable import Imaging

/// The pipeline is one list of steps (`Thumbnailer.steps`), the same for a still and for
/// every frame of an animation: the list is the one docs/design.md shows, and each step
/// is tested here on its own, on pictures made in memory: what it does when the plan asks
/// for it, and that it leaves the picture as it is when the plan does not.
@Suite struct PipelineStepTests {
    /// A picture of one colour, `bands` 3 or 4.
    static func solid(_ w: Int, _ h: Int, _ colour: [UInt8]) throws -> VImage {
        try VImage.fromPixels(
            Array((0..<(w * h)).map { _ in colour }.joined()), width: w, height: h, bands: colour.count)
    }

    /// A plan that asks for nothing but `size`: fit, no region, effect, shape or border.
    static func plain(_ size: Size) -> Plan {
        Plan(
            source: size, mode: .fit, box: size, scale: 1, scaleX: 1, scaleY: 1, resized: size, output: size,
            crop: nil, placement: nil, gravity: .center, shape: nil, cornerRadius: 0, background: nil,
            upright: size, asked: size, canvas: size)
    }

    static func step(_ name: String) throws -> Step {
        try #require(Thumbnailer.steps.first { $0.name == name }, "no step \(name)")
    }

    /// `frame` through the step named so.
    static func run(_ name: String, _ frame: inout Frame) throws {
        let t = try Thumbnailer(limits: ImagingLimits())
        try step(name).run(t, &frame)
    }

    /// The pixel at (x, y).
    static func pixel(_ image: VImage, _ x: Int, _ y: Int) throws -> [UInt8] {
        let all = try image.pixels()
        let start = (y * image.width + x) * image.bands
        return Array(all[start..<start + image.bands])
    }

    /// `frame` is `size`, its top-left pixel `border` and the pixel at `inside` `picture`.
    static func expectBordered(
        _ frame: Frame, _ size: Size, border: [UInt8], inside: (Int, Int), picture: [UInt8]
    ) throws {
        #expect(frame.image.size == size)
        #expect(try pixel(frame.image, 0, 0).prefix(3) == border[...])
        #expect(try pixel(frame.image, inside.0, inside.1).prefix(3) == picture[...])
    }

    @Test func theListIsTheOneDesignShows() throws {
        let design = try Docs.text("docs/design.md")
        let section = try #require(design.components(separatedBy: "### The steps\n").dropFirst().first)
        let body = section.components(separatedBy: "\n#").first ?? section
        let listed = body.split(separator: "\n").compactMap { line -> String? in
            guard let m = line.range(of: #"^\d+\. `[^`]+`"#, options: .regularExpression) else { return nil }
            return String(line[m].drop { $0 != "`" }.dropFirst().dropLast())
        }
        #expect(listed == Thumbnailer.steps.map(\.name))
        #expect(listed.count >= 12)
    }

    /// A plan that asks for nothing: every step leaves an opaque picture as it was.
    @Test func aPlainPlanLeavesThePictureAsItIs() throws {
        let size = Size(width: 6, height: 4)
        let image = try Self.solid(6, 4, [10, 200, 30])
        for format in [ImageFormat.jpeg, .png, .webp] {
            var frame = Frame(image, plan: Self.plain(size), format: format, cut: nil)
            let t = try Thumbnailer(limits: ImagingLimits())
            for step in Thumbnailer.steps {
                try step.run(t, &frame)
                #expect(frame.image.size == size, "\(step.name)")
                #expect(try frame.image.pixels() == image.pixels(), "\(step.name) on \(format)")
            }
            #expect(frame.plan == Self.plain(size) && frame.facts == nil)
        }
    }

    @Test func reshapeCutsTheRegionAndTurnsIt() throws {
        // A 4×2 picture, left half red and right half blue; the region is its right half,
        // turned a quarter.
        var pixels: [UInt8] = []
        for _ in 0..<2 { pixels += [255, 0, 0, 255, 0, 0, 0, 0, 255, 0, 0, 255] }
        let whole = try VImage.fromPixels(pixels, width: 4, height: 2, bands: 3)
        var plan = Self.plain(Size(width: 2, height: 2))
        plan.upright = Size(width: 4, height: 2)
        plan.region = Rect(x: 2, y: 0, width: 2, height: 2)
        plan.rotate = 90
        let cut = Thumbnailer.regionCut(plan)
        #expect(cut.whole == Size(width: 4, height: 2))
        var frame = Frame(whole, plan: plan, format: .png, cut: cut)
        try Self.run("reshape", &frame)
        #expect(frame.image.size == Size(width: 2, height: 2))
        #expect(try Self.pixel(frame.image, 0, 0) == [0, 0, 255] && Self.pixel(frame.image, 1, 1) == [0, 0, 255])
    }

    @Test func exactSizeRefusesAnotherSize() throws {
        var frame = Frame(
            try Self.solid(5, 4, [1, 2, 3]), plan: Self.plain(Size(width: 6, height: 4)), format: .png, cut: nil)
        #expect(throws: ImagingError.self) { try Self.run("exact size", &frame) }
    }

    @Test func cropOrPlaceCutsTheWindowAndPlacesOnTheBars() throws {
        var fill = Self.plain(Size(width: 6, height: 4))
        fill.mode = .fill
        fill.box = Size(width: 3, height: 4)
        fill.crop = Rect(x: 3, y: 0, width: 3, height: 4)
        var frame = Frame(try Self.solid(6, 4, [9, 9, 9]), plan: fill, format: .png, cut: nil)
        try Self.run("crop or place", &frame)
        #expect(frame.image.size == Size(width: 3, height: 4))

        var pad = Self.plain(Size(width: 4, height: 2))
        pad.mode = .pad
        pad.box = Size(width: 4, height: 4)
        pad.placement = Rect(x: 0, y: 1, width: 4, height: 2)
        pad.background = Color(red: 0, green: 255, blue: 0)
        var padded = Frame(try Self.solid(4, 2, [255, 0, 0]), plan: pad, format: .jpeg, cut: nil)
        try Self.run("crop or place", &padded)
        try Self.expectBordered(
            padded, Size(width: 4, height: 4), border: [0, 255, 0], inside: (0, 1), picture: [255, 0, 0])
    }

    @Test func extendFillsTheCanvasAsThePlanSays() throws {
        var plan = Self.plain(Size(width: 2, height: 2))
        plan.extended = Rect(x: 1, y: 1, width: 2, height: 2)
        plan.canvas = Size(width: 4, height: 4)
        plan.output = plan.canvas
        plan.background = Color(red: 0, green: 0, blue: 255)
        var frame = Frame(try Self.solid(2, 2, [255, 0, 0]), plan: plan, format: .jpeg, cut: nil)
        try Self.run("extend", &frame)
        try Self.expectBordered(
            frame, Size(width: 4, height: 4), border: [0, 0, 255], inside: (1, 1), picture: [255, 0, 0])
        // A planner's fill: the picture's mean colour.
        plan.canvasFill = .mean
        var mean = Frame(try Self.solid(2, 2, [40, 80, 120]), plan: plan, format: .jpeg, cut: nil)
        try Self.run("extend", &mean)
        #expect(try Self.pixel(mean.image, 3, 3).prefix(3) == [40, 80, 120])
    }

    @Test func effectsBlurPixelateAndGrey() throws {
        var plan = Self.plain(Size(width: 4, height: 4))
        plan.grayscale = true
        var grey = Frame(try Self.solid(4, 4, [255, 0, 0]), plan: plan, format: .png, cut: nil)
        try Self.run("effects", &grey)
        // Rec. 601 luma of pure red, 0.299 × 255.
        #expect(try Self.pixel(grey.image, 2, 2).first == 76)

        var blur = Self.plain(Size(width: 8, height: 1))
        blur.blur = 2
        var pixels: [UInt8] = []
        for x in 0..<8 { pixels += x < 4 ? [0, 0, 0] : [255, 255, 255] }
        var edge = Frame(
            try VImage.fromPixels(pixels, width: 8, height: 1, bands: 3), plan: blur, format: .png, cut: nil)
        try Self.run("effects", &edge)
        let middle = try Self.pixel(edge.image, 3, 0)[0]
        #expect(middle > 0 && middle < 255, "the edge is softened: \(middle)")
    }

    @Test func watermarkNotReadIsAnInternalError() throws {
        var plan = Self.plain(Size(width: 4, height: 4))
        plan.watermark = WatermarkPlacement(name: "missing", rect: Rect(x: 0, y: 0, width: 2, height: 2), opacity: 1)
        var frame = Frame(try Self.solid(4, 4, [1, 2, 3]), plan: plan, format: .png, cut: nil)
        #expect(throws: ImagingError.self) { try Self.run("watermark", &frame) }
    }

    @Test func shapeClearsTheCorners() throws {
        var plan = Self.plain(Size(width: 8, height: 8))
        plan.shape = .circle
        plan.cornerRadius = 4
        var frame = Frame(try Self.solid(8, 8, [200, 100, 50]), plan: plan, format: .png, cut: nil)
        try Self.run("shape", &frame)
        #expect(frame.image.bands == 4)
        #expect(try Self.pixel(frame.image, 0, 0)[3] == 0 && Self.pixel(frame.image, 4, 4)[3] == 255)
    }

    @Test func paddingAddsTheMargin() throws {
        var plan = Self.plain(Size(width: 2, height: 2))
        plan.padding = Insets(top: 1, right: 2, bottom: 3, left: 4)
        plan.output = Size(width: 8, height: 6)
        plan.background = Color(red: 255, green: 255, blue: 0)
        var frame = Frame(try Self.solid(2, 2, [0, 0, 255]), plan: plan, format: .jpeg, cut: nil)
        try Self.run("padding", &frame)
        try Self.expectBordered(
            frame, Size(width: 8, height: 6), border: [255, 255, 0], inside: (4, 1), picture: [0, 0, 255])
    }

    @Test func flattenWhereTheFormatHasNoAlphaOrThePlanAsks() throws {
        // (A round trip through scRGB, as a loader's picture is, so that the fourth band is
        // alpha: libvips calls a picture made in memory multiband.)
        let linear = try Self.solid(2, 2, [255, 0, 0, 0]).then("colourspace") {
            cvips_colourspace($0, $1, VIPS_INTERPRETATION_scRGB)
        }
        let clear = try linear.then("colourspace") { cvips_colourspace($0, $1, VIPS_INTERPRETATION_sRGB) }
        #expect(clear.hasAlpha)
        var plan = Self.plain(Size(width: 2, height: 2))
        plan.background = Color(red: 0, green: 255, blue: 0)
        var jpeg = Frame(clear, plan: plan, format: .jpeg, cut: nil)
        try Self.run("flatten", &jpeg)
        #expect(try jpeg.image.bands == 3 && Self.pixel(jpeg.image, 0, 0) == [0, 255, 0])
        var png = Frame(clear, plan: plan, format: .png, cut: nil)
        try Self.run("flatten", &png)
        #expect(png.image.bands == 4, "a format with alpha keeps it")
        plan.flattened = true
        var asked = Frame(clear, plan: plan, format: .png, cut: nil)
        try Self.run("flatten", &asked)
        #expect(asked.image.bands == 3)
    }

    /// `facts` and `faces` read a still's source: a frame of an animation has none, and
    /// they leave it as it is (its faces are found once, before the frames).
    @Test func factsAndFacesNeedAStill() throws {
        var plan = Self.plain(Size(width: 4, height: 4))
        plan.mode = .fill
        plan.gravity = .face
        var frame = Frame(try Self.solid(4, 4, [5, 5, 5]), plan: plan, format: .png, cut: nil)
        try Self.run("facts", &frame)
        try Self.run("faces", &frame)
        #expect(frame.facts == nil && frame.plan == plan)
    }
}
