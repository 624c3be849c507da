import Foundation
import Imaging
import ImagingTestSupport
import TestSupport
import Testing

/// Animated sources through the real binary: the format by Accept, /info's frames, and
/// the frame limit.
@Suite(.serialized) struct AnimationServiceTests {
    let dir: URL

    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("aspect-anim-\(UUID().uuidString)")
        let images = dir.appendingPathComponent("images")
        try FileManager.default.createDirectory(at: images, withIntermediateDirectories: true)
        for (name, frames) in [("eight.gif", 8), ("many.gif", 101)] {
            var pixels: [UInt8] = []
            for f in 0..<frames {
                for _ in 0..<(40 * 30) { pixels += [UInt8(f * 37 % 256), UInt8(255 - f * 23 % 256), 200] }
            }
            let strip = RawImage(width: 40, height: 30 * frames, bands: 3, pixels: pixels)
            try Data(ImageFile.encode(strip, as: .gif, pageHeight: 30, delays: Array(repeating: 50, count: frames)))
                .write(to: images.appendingPathComponent(name))
        }
    }

    @Test func animationsAreServedAnimatedAndLimited() throws {
        let s = try ServeProcess(
            dir: dir, env: ["ASPECT_IMAGES_ROOT": "images", "ASPECT_CACHE_DIR": "cache", "ASPECT_LOG_ACCESS": "false"])
        let gif = try ServiceTests.get(s.port, "/thumb?src=eight.gif&w=20&h=20&mode=fill")
        #expect(gif.status == 200 && gif.headers["content-type"] == "image/gif" && gif.headers["vary"] == "Accept")
        let a = try ImageFile.animation(gif.body)
        #expect(a.frames == 8 && a.width == 20 && a.pageHeight == 20 && a.delays == Array(repeating: 50, count: 8))
        let webp = try ServiceTests.get(
            s.port, "/thumb?src=eight.gif&w=20&h=20&mode=fill", headers: ["Accept": "image/webp"])
        let webpFrames = try ImageFile.animation(webp.body).frames
        #expect(webp.headers["content-type"] == "image/webp" && webpFrames == 8)
        let still = try ServiceTests.get(s.port, "/thumb?src=eight.gif&w=20&frames=1&format=png")
        #expect(still.headers["content-type"] == "image/png")
        let info = try ServiceTests.get(s.port, "/info?src=eight.gif&w=20")
        #expect(
            info.text.contains(#""frames": 8"#) && info.text.contains(#""format": "gif"}}"#), "\(info.text.suffix(80))")
        let many = try ServiceTests.get(s.port, "/thumb?src=many.gif&w=20")
        #expect(many.status == 413 && many.text.contains("limits.maxAnimationFrames 100"), "\(many.text)")
    }
}
