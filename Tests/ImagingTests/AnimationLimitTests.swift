import Core
import Imaging
import TestSupport
import Testing

/// SPEC's limits on animated sources, checked from the header before any frame is
/// decoded: `limits.maxAnimationFrames`, and the frames' pixels together against
/// `limits.maxSourcePixels`.
@Suite struct AnimationLimitTests {
    let fixtures: Fixtures

    init() throws { fixtures = try Fixtures() }

    /// An animation of `frames` frames of `side`×`side`, stacked as libvips does.
    func animation(_ name: String, frames: Int, side: Int, as container: ImageFile.Container) throws -> String {
        var pixels: [UInt8] = []
        for f in 0..<frames {
            for _ in 0..<(side * side) { pixels += [UInt8(f * 40 % 256), 100, 200] }
        }
        let strip = RawImage(width: side, height: side * frames, bands: 3, pixels: pixels)
        return try fixtures.write(name, ImageFile.encode(strip, as: container, pageHeight: side))
    }

    @Test(arguments: [ImageFile.Container.gif, .webp])
    func framesAreCountedAndLimited(container: ImageFile.Container) throws {
        let ext = container == .gif ? "gif" : "webp"
        let five = try animation("five.\(ext)", frames: 5, side: 32, as: container)
        let t = try Thumbnailer(limits: ImagingLimits(maxAnimationFrames: 5))
        #expect(try t.probe(path: five).frames == 5)
        let many = try animation("many.\(ext)", frames: 6, side: 32, as: container)
        do {
            _ = try t.probe(path: many)
            Issue.record("6 frames passed a limit of 5")
        } catch {
            #expect(error.error.code == .sourceTooLarge && error.error.message.contains("limits.maxAnimationFrames 5"))
        }
    }

    /// 5 frames of 100×100 are 50,000 pixels: over a limit of 40,000 that one frame is under.
    @Test func theFramesPixelsCountTogether() throws {
        let gif = try animation("big.gif", frames: 5, side: 100, as: .gif)
        let t = try Thumbnailer(limits: ImagingLimits(maxSourcePixels: 40_000))
        do {
            _ = try t.probe(path: gif)
            Issue.record("5 × 10,000 pixels passed a limit of 40,000")
        } catch {
            #expect(error.error.code == .sourceTooLarge && error.error.message.contains("5 frames"), "\(error)")
        }
        #expect(try Thumbnailer(limits: ImagingLimits(maxSourcePixels: 50_000)).probe(path: gif).frames == 5)
    }

    /// A 10,000-frame GIF (of 2×2 frames) is refused from its header under the default
    /// limit of 100 frames, before any frame is decoded. (libvips 8.14 counts at most 4097
    /// frames of it: the message names that count.)
    @Test func tenThousandFramesAreA413() throws {
        let gif = try animation("ten-thousand.gif", frames: 10_000, side: 2, as: .gif)
        do {
            _ = try Thumbnailer(limits: ImagingLimits()).probe(path: gif)
            Issue.record("10,000 frames passed")
        } catch {
            #expect(
                error.error.code == .sourceTooLarge
                    && error.error.message.contains("frames, over limits.maxAnimationFrames 100"), "\(error)")
        }
    }
}
