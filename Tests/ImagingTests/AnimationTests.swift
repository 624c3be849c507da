import Core
import Foundation
import Imaging
import ImagingTestSupport
import TestSupport
import Testing

/// Animated GIF and WebP sources stay animated (SPEC: Animated sources): frames, their
/// size, their delays and the loop count read back by libvips.
@Suite struct AnimationTests {
    let fixtures: Fixtures
    let gif: String
    static let delays: [Int32] = [40, 80, 120, 160, 200, 240, 280, 320]

    init() throws {
        fixtures = try Fixtures()
        // 8 frames of 96×64: a red square that moves right, on blue.
        var pixels: [UInt8] = []
        for f in 0..<8 {
            for y in 0..<64 {
                for x in 0..<96 { pixels += (x / 12 == f && y < 32) ? [255, 0, 0] : [0, 0, 255] }
            }
        }
        gif = try fixtures.write(
            "moving.gif",
            ImageFile.encode(
                RawImage(width: 96, height: 512, bands: 3, pixels: pixels), as: .gif, pageHeight: 64,
                delays: Self.delays, loop: 3))
    }

    func render(_ query: String, accept: String? = nil) throws -> Thumbnailer.Rendered {
        try Thumbnailer(limits: ImagingLimits()).thumbnail(
            path: gif, request: try request(query), requestLimits: RequestLimits(), accept: accept)
    }

    @Test(arguments: ["webp", "gif"])
    func everyFrameKeepsItsDelayAndTheLoop(format: String) throws {
        let r = try render("w=48&h=48&mode=fill&format=\(format)")
        let a = try ImageFile.animation(r.bytes)
        #expect(a.frames == 8 && a.width == 48 && a.pageHeight == 48, "\(a)")
        #expect(a.delays == Self.delays && a.loop == 3, "\(a)")
    }

    @Test func autoIsWebPWhereAcceptedElseGIF() throws {
        #expect(try render("w=48", accept: "image/webp").format == .webp)
        #expect(try render("w=48", accept: "image/png").format == .gif)
        #expect(try ImageFile.animation(render("w=48").bytes).frames == 8)
    }

    @Test func framesOneAndStillFormatsTakeTheFirstFrame() throws {
        for query in ["w=48&frames=1", "w=48&format=png", "w=48&format=jpeg", "w=48&frames=1&format=gif"] {
            let r = try render(query)
            #expect(try ImageFile.animation(r.bytes).frames == 1, "\(query)")
        }
    }

    /// A shape clips every frame: each has transparent corners.
    @Test func aShapeClipsEveryFrame() throws {
        let r = try render("w=48&ratio=1&mode=fill&shape=circle&format=webp")
        let a = try ImageFile.animation(r.bytes)
        #expect(a.frames == 8 && a.bands == 4)
        let strip = try ImageFile.decodeAllPages(r.bytes)
        for f in 0..<8 { #expect(strip.pixel(0, f * 48)[3] == 0, "frame \(f): the corner is not clear") }
    }

    /// crop, rotate and flip reshape every frame, as a still: the 96×64 frames turned a
    /// quarter are 64×96, and the red square of the first frame (top left) ends top right.
    @Test func cropAndRotateReshapeEveryFrame() throws {
        let turned = try render("w=32&rotate=90&format=webp")
        let a = try ImageFile.animation(turned.bytes)
        #expect(a.frames == 8 && a.width == 32 && a.pageHeight == 48, "\(a)")
        let strip = try ImageFile.decodeAllPages(turned.bytes)
        let first = strip.pixel(28, 4)
        #expect(first[0] > 200 && first[2] < 60, "frame 0's top right: \(first)")
        // The left half of each frame: 48×64, so w=24 is 24×32.
        let left = try ImageFile.animation(render("crop=0,0,0.5,1&w=24&format=gif").bytes)
        #expect(left.frames == 8 && left.width == 24 && left.pageHeight == 32, "\(left)")
    }

    /// A frame whose data is corrupt in the middle of an animation is a 415, not an
    /// animation with a frame missing. A file cut short is another thing: GIF's decoder
    /// reads the frames it holds whole (5 of these 8), and that is what is served.
    @Test func aBrokenFrameInTheMiddleIs415() throws {
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: gif)))
        let n = bytes.count
        for i in (n * 5 / 10)..<(n * 6 / 10) { bytes[i] = 0xFF }
        let broken = try fixtures.write("broken.gif", bytes)
        do {
            _ = try Thumbnailer(limits: ImagingLimits()).thumbnail(
                path: broken, request: try request("w=48&format=webp"), requestLimits: RequestLimits())
            Issue.record("a corrupt animation was rendered")
        } catch let e as ImagingError {
            #expect(e.error.code == .unsupportedSource, "\(e)")
        }
        let whole = try [UInt8](Data(contentsOf: URL(fileURLWithPath: gif)))
        let cut = try fixtures.write("cut.gif", Array(whole.prefix(whole.count * 5 / 8)))
        let t = try Thumbnailer(limits: ImagingLimits())
        let frames = try t.probe(path: cut).frames
        let r = try t.thumbnail(path: cut, request: try request("w=48&format=webp"), requestLimits: RequestLimits())
        let served = try ImageFile.animation(r.bytes).frames
        #expect(frames == 5 && served == frames)
    }
}
