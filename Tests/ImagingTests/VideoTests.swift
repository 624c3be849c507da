import Core
import Foundation
import Imaging
import ImagingTestSupport
import Syscalls
import Testing

/// Video sources (SPEC: Video), on clips written here with FFmpeg's encoders: each second
/// of a clip is one flat colour, so which moment was decoded is read from the output's
/// colour.
@Suite struct VideoTests {
    /// Red, green, blue, yellow, magenta, cyan: second k is colour k.
    static let palette: [[UInt8]] = [
        [255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0], [255, 0, 255], [0, 255, 255],
    ]

    /// `seconds` seconds at `fps`, width × height, second k in palette[k], with a white
    /// square in the top left corner (so a turn shows).
    static func frames(seconds: Int, fps: Int, width: Int, height: Int) -> [RawImage] {
        // Built a row at a time: a pixel at a time is slow in a debug build.
        let white = [UInt8](repeating: 255, count: width / 4 * 3)
        let byColour = palette.map { colour -> RawImage in
            let row = Array([[UInt8]](repeating: colour, count: width).joined())
            var pixels = [UInt8]()
            pixels.reserveCapacity(width * height * 3)
            for y in 0..<height { pixels += y < height / 4 ? white + row[white.count...] : row[...] }
            return RawImage(width: width, height: height, bands: 3, pixels: pixels)
        }
        return (0..<(seconds * fps)).map { byColour[$0 / fps % palette.count] }
    }

    static func clip(
        _ fixtures: Fixtures, _ name: String, codec: ImageFile.VideoCodec = .h264, seconds: Int = 4, fps: Int = 10,
        width: Int = 160, height: Int = 96, gop: Int = 10, rotation: Int = 0
    ) throws -> String {
        let path = fixtures.dir.appendingPathComponent(name).path
        try ImageFile.writeClip(
            to: path, frames: frames(seconds: seconds, fps: fps, width: width, height: height), fps: fps,
            codec: codec, keyframeEvery: gop, rotation: rotation)
        return path
    }

    /// The palette entry nearest the colour at (x, y).
    static func second(_ img: RawImage, _ x: Int, _ y: Int) -> Int {
        let p: [Int] = img.pixel(x, y).prefix(3).map { Int($0) }
        func distance(_ k: Int) -> Int {
            var d = 0
            for c in 0..<3 {
                let e = Int(palette[k][c]) - p[c]
                d += e * e
            }
            return d
        }
        return palette.indices.min { distance($0) < distance($1) } ?? -1
    }

    @Test(arguments: [
        ("h264.mp4", ImageFile.VideoCodec.h264, "mp4", "h264"), ("vp9.webm", .vp9, "webm", "vp9"),
        ("mpeg4.mkv", .mpeg4, "mkv", "mpeg4"),
    ])
    func aClipIsAStillOfItsMoment(name: String, codec: ImageFile.VideoCodec, container: String, codecName: String)
        throws
    {
        let fixtures = try Fixtures()
        let path = try Self.clip(fixtures, name, codec: codec)
        let t = try Thumbnailer(limits: ImagingLimits())
        let info = try t.probe(path: path)
        #expect(info.format == container && info.size == Size(width: 160, height: 96), "\(info)")
        #expect(info.video?.codec == codecName && abs((info.video?.duration ?? 0) - 4) < 0.15, "\(info)")
        #expect(abs((info.video?.fps ?? 0) - 10) < 0.01)
        // No t: video.defaultSeconds, 1 s: the second second's colour.
        let (still, rendered) = try thumb(path, "w=80&format=png")
        #expect(rendered.format == .png && still.width == 80 && still.height == 48)
        #expect(Self.second(still, 60, 36) == 1)
        for (query, second) in [("t=0", 0), ("t=2.5", 2), ("t=3.95", 3), ("t=1&w=40&h=40&mode=fill", 1)] {
            let (img, _) = try thumb(path, "\(query)&format=png")
            #expect(Self.second(img, img.width * 3 / 4, img.height * 3 / 4) == second, "\(name) \(query)")
        }
    }

    @Test func pastTheEndIs400NamingTheDuration() throws {
        let fixtures = try Fixtures()
        let path = try Self.clip(fixtures, "a.mp4")
        #expect {
            _ = try thumb(path, "t=5&w=50")
        } throws: { error in
            guard let e = error as? ImagingError else { return false }
            return e.error.code == .badParam && e.error.message.contains("the video is 4 s long")
        }
    }

    /// A clip shorter than twice `video.defaultSeconds`: its middle frame.
    @Test func aShortClipShowsItsMiddle() throws {
        let fixtures = try Fixtures()
        let path = try Self.clip(fixtures, "short.mp4", seconds: 1, fps: 10)
        let (img, _) = try thumb(path, "w=80&format=png")
        #expect(Self.second(img, 60, 36) == 0)
        #expect(try Thumbnailer(limits: ImagingLimits()).probe(path: path).video.map { $0.duration < 2 } == true)
    }

    /// The display matrix turns the frames as EXIF orientation turns a photo: W0 × H0 is
    /// the upright frame, and the white corner moves where a player shows it.
    @Test func aRotatedClipIsUpright() throws {
        let fixtures = try Fixtures()
        let path = try Self.clip(fixtures, "turned.mp4", rotation: 90)
        let info = try Thumbnailer(limits: ImagingLimits()).probe(path: path)
        #expect(info.size == Size(width: 96, height: 160) && info.storedSize == Size(width: 160, height: 96))
        let (img, _) = try thumb(path, "w=48&format=png")
        #expect(img.width == 48 && img.height == 80)
        // Stored top left, turned a quarter clockwise: top right.
        #expect(img.pixel(44, 4).prefix(3).allSatisfy { $0 > 200 }, "\(img.pixel(44, 4))")
        #expect(!img.pixel(4, 4).prefix(3).allSatisfy { $0 > 200 })
    }

    /// `frames=4`: an animation of the moments t + k × (duration − t) / 4, each shown
    /// `video.previewFrameMs`, looping forever.
    @Test(arguments: [ImageFormat.webp, .gif])
    func framesMakesAHoverPreview(format: ImageFormat) throws {
        let fixtures = try Fixtures()
        let path = try Self.clip(fixtures, "p.mp4")
        let (_, rendered) = try thumb(path, "w=80&frames=4&t=0&format=\(format.rawValue)")
        #expect(rendered.format == format)
        let animation = try ImageFile.animation(rendered.bytes)
        #expect(animation.frames == 4 && animation.width == 80 && animation.pageHeight == 48, "\(animation)")
        #expect(animation.delays == [500, 500, 500, 500] && animation.loop == 0)
        let strip = try ImageFile.decodeAllPages(rendered.bytes)
        let seconds = (0..<4).map { Self.second(strip, 60, $0 * 48 + 36) }
        #expect(seconds == [0, 1, 2, 3], "\(seconds)")
        // A still format holds the first moment; no t: from 1 s.
        let (first, still) = try thumb(path, "w=80&frames=4&format=png")
        #expect(still.format == .png && Self.second(first, 60, 36) == 1)
    }

    @Test func framesOnAnImageIs400() throws {
        let fixtures = try Fixtures()
        let jpeg = try fixtures.write(
            "a.jpg", try ImageFile.encode(Fixtures.quadrants(width: 40, height: 40), as: .jpeg))
        #expect {
            _ = try thumb(jpeg, "w=20&frames=4")
        } throws: { error in
            (error as? ImagingError)?.error.message.contains("frames=4 makes a preview of a video") == true
        }
    }

    /// One keyframe at 0 and `t` near the end: more than `limits.maxVideoSeconds` of decoding
    /// is refused (413) rather than done; under the limit it is done.
    @Test func aSingleKeyframeClipIsHeldToMaxVideoSeconds() throws {
        let fixtures = try Fixtures()
        let path = try Self.clip(fixtures, "onekey.mp4", seconds: 6, gop: 1000)
        var limits = ImagingLimits()
        limits.maxVideoSeconds = 2
        #expect {
            _ = try thumb(path, "t=5&w=40", limits: limits)
        } throws: { error in
            guard let e = error as? ImagingError else { return false }
            return e.error.code == .sourceTooLarge && e.error.message.contains("limits.maxVideoSeconds")
        }
        let (img, _) = try thumb(path, "t=1.5&w=40&format=png", limits: limits)
        #expect(Self.second(img, 30, 20) == 1)
        // With the default limit (30 s) the far frame is decoded.
        let (far, _) = try thumb(path, "t=5&w=40&format=png")
        #expect(Self.second(far, 30, 20) == 5)
    }

    @Test func truncatedAudioOnlyAndNotAllowedAre415() throws {
        let fixtures = try Fixtures()
        let whole = try [UInt8](Data(contentsOf: URL(fileURLWithPath: try Self.clip(fixtures, "w.mp4"))))
        let cut = try fixtures.write("cut.mp4", Array(whole.prefix(whole.count / 3)))
        let audio = fixtures.dir.appendingPathComponent("tone.mkv").path
        try ImageFile.writeAudioOnly(to: audio, seconds: 2)
        for path in [cut, audio] {
            #expect {
                _ = try thumb(path, "w=40")
            } throws: { error in
                (error as? ImagingError)?.error.code == .unsupportedSource
            }
        }
        var noVideo = ImagingLimits()
        noVideo.formats = ["jpeg", "png"]
        #expect {
            _ = try thumb(try Self.clip(fixtures, "v.webm", codec: .vp9), "w=40", limits: noVideo)
        } throws: { error in
            (error as? ImagingError)?.error.message.contains(
                "the source is webm video, which this service does not decode")
                == true
        }
    }

    /// The frame's pixels are held to `limits.maxSourcePixels` from the stream's header,
    /// before anything is decoded.
    @Test func framesOverThePixelLimitAre413FromTheHeader() throws {
        let fixtures = try Fixtures()
        let path = try Self.clip(fixtures, "big.mp4", seconds: 1)
        var limits = ImagingLimits()
        limits.maxSourcePixels = 10_000
        #expect {
            _ = try thumb(path, "w=40", limits: limits)
        } throws: { error in
            guard let e = error as? ImagingError else { return false }
            return e.error.code == .sourceTooLarge && e.stage == .limits
                && e.error.message.contains("the video's frames are 160×96 = 15360 pixels")
        }
    }

    /// Decoding that runs past `limits.processingTimeoutMs` ends as the timeout (504), not
    /// as a finished frame or a hang: checked between packets.
    @Test func aDecodePastTheDeadlineIsATimeout() throws {
        let fixtures = try Fixtures()
        let path = try Self.clip(fixtures, "slow.mp4", seconds: 6, width: 640, height: 480, gop: 1000)
        var limits = ImagingLimits()
        limits.processingTimeoutMs = 10
        let started = Date()
        #expect {
            _ = try thumb(path, "t=5.5&w=64", limits: limits)
        } throws: { error in
            (error as? ImagingError)?.error.code == .processingTimeout
        }
        #expect(Date().timeIntervalSince(started) < 2)
    }

    @Test func infoGivesTheStreamAndTheDefaultFramesPreview() throws {
        let fixtures = try Fixtures()
        let path = try Self.clip(fixtures, "i.mp4")
        let facts = try Thumbnailer(limits: ImagingLimits()).describe(file: try OpenFile.open(path).get())
        #expect(facts.video?.codec == "h264" && facts.description.duration.map { abs($0 - 4) < 0.15 } == true)
        // The preview is the 1-second frame: green, away from the white corner.
        let i = ((facts.previewHeight - 5) * facts.previewWidth + facts.previewWidth - 5) * 4
        let p = Array(facts.previewRGBA[i..<i + 3]).map(Int.init)
        #expect(p[1] > 200 && p[0] < 60 && p[2] < 60, "\(p)")
    }
}
