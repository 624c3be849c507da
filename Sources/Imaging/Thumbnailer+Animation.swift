internal import CVips
import Core
import Foundation
import Syscalls

// Animated sources: every frame through the same plan.
extension Thumbnailer {
    /// An animated source to an animated WebP or GIF: libvips resizes every frame (loaded
    /// with n=-1) to the planned size in one pass; then each frame goes through the same
    /// steps as a still (crop or place, effects, shape), and the frames are joined again
    /// with the source's delays and loop count.
    func renderAnimation(
        _ input: SourceInput, source info: SourceInfo, plan: Plan, format: ImageFormat, quality: Int?, maxBytes: Int?,
        deadline: Deadline
    ) throws(ImagingError) -> [UInt8] {
        let frames = info.frames
        let (cut, decoded) = try framesDecoded(plan, count: frames)
        let source = try VSource(input, deadline: deadline)
        let (w, h) = (Int32(decoded.width), Int32(decoded.height))
        let toSRGB: Int32 = info.profile == .other ? 1 : 0
        let failOn = Int32(VIPS_FAIL_ON_ERROR.rawValue)
        let corrupt = AspectError(
            .unsupportedSource, "the animation cannot be decoded: a frame is corrupt or truncated")
        let strip: VImage
        do throws(ImagingError) {
            let lazy = try VImage.make(.decode, corrupt) {
                cvips_thumbnail_animated(source.pointer, $0, w, h, failOn, toSRGB)
            }
            // Not copied to memory: the encoder pulls the frames through the steps below as
            // it writes them (about 130 ms less for 50 frames than decoding them all first).
            strip = lazy
        } catch {
            if source.expired || deadline.passed { throw deadline.error }
            throw error
        }
        var pageHeight: Int32 = 0
        var delayPointer: UnsafePointer<Int32>?
        var delayCount: Int32 = 0
        var loop: Int32 = 0
        cvips_get_animation(strip.pointer, &pageHeight, &delayPointer, &delayCount, &loop)
        let delays = delayPointer.map { Array(UnsafeBufferPointer(start: $0, count: Int(delayCount))) } ?? []
        guard strip.size.width == decoded.width, Int(pageHeight) == decoded.height,
            strip.size.height == decoded.height * frames
        else {
            throw ImagingError(
                .process, AspectError(.internalError, "processing the animation failed (resize)"),
                detail: "thumbnail gave \(strip.size) in pages of \(pageHeight), planned \(frames) × \(decoded)")
        }
        do throws(ImagingError) {
            return try animate(
                count: frames, cut: cut, plan: plan, format: format, quality: quality, maxBytes: maxBytes,
                delays: delays, loop: loop,
                deadline: deadline
            ) { i throws(ImagingError) in
                try strip.then("extract_area") { cvips_extract_area($0, $1, 0, Int32(i) * h, w, h) }
            }
        } catch {
            if error.stage != .encode { throw error }
            // The frames are decoded as the encoder reads them, so a failure here is the
            // source's (a corrupt frame) or the deadline's, not the encoder's.
            if source.expired || deadline.passed { throw deadline.error }
            throw ImagingError(.decode, corrupt, detail: error.detail)
        }
    }

    /// The size an animation's frames are decoded at: the plan's, or, with a region or a
    /// turn, the whole source's at the region's scale (each frame is then reshaped as a
    /// still is). All `count` frames together are held to `limits.maxSourcePixels` (400).
    func framesDecoded(_ plan: Plan, count: Int) throws(ImagingError) -> (cut: RegionCut?, size: Size) {
        let cut = plan.reshapesSource ? Self.regionCut(plan) : nil
        let decoded = cut?.whole ?? plan.resized
        if let cut { try checkWhole(cut.whole, frames: count) }
        let pixels = decoded.pixels(frames: count)
        guard pixels <= limits.maxSourcePixels else {
            throw ImagingError(
                .limits,
                AspectError(
                    .badParam,
                    "this request decodes \(count) frames at \(decoded) each, over limits.maxSourcePixels "
                        + "\(limits.maxSourcePixels); ask for a smaller size or fewer frames (frames=1: one)"))
        }
        return (cut, decoded)
    }

    /// The frames `frame(i)` gives (each at the decoded size: the plan's, or the whole
    /// source's for a region or a turn) through the same `steps` as a still, joined again,
    /// and encoded as an animation with `delays` and `loop`.
    func animate(
        count: Int, cut: RegionCut?, plan: Plan, format: ImageFormat, quality: Int?, maxBytes: Int?, delays: [Int32],
        loop: Int32,
        deadline: Deadline, frame: (Int) throws(ImagingError) -> VImage
    ) throws(ImagingError) -> [UInt8] {
        // Every frame's output, padding and extension included, held to the same limit as
        // the decode: an animation's frames are all in memory before it is encoded.
        guard plan.output.pixels(frames: count) <= limits.maxSourcePixels else {
            throw ImagingError(
                .limits,
                AspectError(
                    .badParam,
                    "this request makes \(count) frames of \(plan.output) each, over limits.maxSourcePixels "
                        + "\(limits.maxSourcePixels) in all; ask for a smaller size or fewer frames"))
        }
        var done: [VImage] = []
        for i in 0..<count {
            try deadline.check()
            var each = Frame(try frame(i), plan: plan, format: format, cut: cut, deadline: deadline)
            try runSteps(&each)
            done.append(each.image)
        }
        // The frames stay referenced by `done` while the join reads them.
        var pointers: [UnsafeMutablePointer<VipsImage>?] = done.map { $0.pointer }
        let joined = try VImage.make(.process, AspectError(.internalError, "processing the animation failed (join)")) {
            out in cvips_arrayjoin_vertical(&pointers, Int32(pointers.count), out)
        }
        let bytes = try Encoder.encode(
            joined, format: format, quality: quality,
            animation: Encoder.Animation(pageHeight: plan.output.height, delays: delays, loop: loop),
            maxBytes: maxBytes, keepCopyright: limits.keepCopyright
        ).bytes
        withExtendedLifetime(done) {}
        return bytes
    }
}
