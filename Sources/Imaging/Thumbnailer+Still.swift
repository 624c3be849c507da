internal import CVips
import Core
import Foundation
import Syscalls

// A still's render, and the decode every render starts from.
extension Thumbnailer {
    /// Renders a plan: the decode with shrink-on-load (for JPEG by `ShrinkOnLoad.fast` when
    /// `limits.fastShrinkOnLoad`, else libvips' choice), autorotated, embedded profiles
    /// converted to sRGB (CMYK too); then `steps`; then the encode, with no metadata.
    func render(
        _ input: SourceInput, source info: SourceInfo, plan: inout Plan, format: ImageFormat, quality: Int?,
        maxBytes: Int?,
        autoQuality: AutoQuality? = nil, best: BestCandidates? = nil, wantFacts: Bool = false,
        facts: inout SourceFacts?, deadline: Deadline
    )
        throws(ImagingError) -> Encoder.Encoded
    {
        let pixels = plan.resized.pixels()
        // A vector's pixels are the ones it is drawn at (SPEC: Source formats): its limit.
        if info.description.isVector { try checkDrawn(plan.resized, info) }
        guard pixels <= limits.maxSourcePixels else {
            throw ImagingError(
                .limits,
                AspectError(
                    .badParam,
                    "this request scales the source to \(plan.resized) pixels before cropping, over "
                        + "limits.maxSourcePixels \(limits.maxSourcePixels); ask with upscale=0 or a box closer to the source's shape"
                ))
        }
        // With a region or a turn, the whole source at the region's scale, cut by the
        // steps; else the plan's size.
        let cut = plan.reshapesSource ? Self.regionCut(plan) : nil
        if let cut {
            if info.description.isVector { try checkDrawn(cut.whole, info) }
            try checkWhole(cut.whole, frames: 1)
        }
        var info = info
        info.flattenFirst = Self.flattensFirst(plan, format: format, info)
        let decoded = try timed("decode") { () throws(ImagingError) in
            try decodeResized(
                input, info, to: cut?.whole ?? plan.resized, fastShrink: limits.fastShrinkOnLoad, deadline: deadline)
        }
        try deadline.check()
        let still = Frame.Still(input: input, info: info, wantFacts: wantFacts)
        var frame = Frame(decoded, plan: plan, format: format, cut: cut, still: still, deadline: deadline)
        try runSteps(&frame)
        (plan, facts) = (frame.plan, frame.facts)
        let image = frame.image
        return try timed("encode") { () throws(ImagingError) in
            try Encoder.encode(
                image, format: format, quality: quality, maxBytes: maxBytes, keepCopyright: limits.keepCopyright,
                autoQuality: autoQuality, unmetKeepsFirst: plan.maxBytesUnmetKeepsFirst, profile: info.keptProfile,
                best: best, avifEffort: limits.avifEffort)
        }
    }

    /// The colour a PNG with alpha is flattened onto as it is decoded, or nil. Where the
    /// result is flattened anyway (its format has no alpha, or the plan asks) and nothing
    /// between the decode and the flatten reads the alpha apart from the colour (a blur, a
    /// sharpening, pixels made blocks, a watermark, a planner's canvas fill, libvips'
    /// choice of a window by attention, entropy or faces), flattening first gives the same
    /// picture, since the resize and the flatten are both linear: and an opaque picture
    /// resizes in 8 bits, where one with alpha is premultiplied and resized in floats
    /// (half a PNG miss's CPU, BENCHMARKS.md, issue 53). Not for a source whose colours
    /// are converted from a profile of its own, or HDR: the background would be read in
    /// the source's colours, not sRGB's.
    static func flattensFirst(_ plan: Plan, format: ImageFormat, _ info: SourceInfo) -> Color? {
        guard info.format == "png", info.hasAlpha, !format.hasAlpha || plan.flattened, plan.blur == nil,
            plan.sharpen == nil, plan.pixelate == nil, plan.watermark == nil, plan.canvasFill == nil,
            plan.gravity.isCompass || plan.gravity == .focus, info.profile != .other, info.hdr == nil,
            info.keptProfile == nil
        else { return nil }
        return plan.background ?? .white
    }

    /// How the region of a plan is cut from the whole source, resized: the size the whole
    /// upright source is resized to, and the window of it that is the region, at the size
    /// that becomes `plan.resized` once turned.
    struct RegionCut {
        var whole: Size
        var window: Rect
    }

    static func regionCut(_ plan: Plan) -> RegionCut {
        let region = plan.region ?? Rect(x: 0, y: 0, width: plan.upright.width, height: plan.upright.height)
        let quarter = plan.rotate == 90 || plan.rotate == 270
        let cut = quarter ? Size(width: plan.resized.height, height: plan.resized.width) : plan.resized
        let sx = Double(cut.width) / Double(region.width)
        let sy = Double(cut.height) / Double(region.height)
        let whole = Size(
            width: max(cut.width, Int((Double(plan.upright.width) * sx).rounded())),
            height: max(cut.height, Int((Double(plan.upright.height) * sy).rounded())))
        let left = min(Int((Double(region.x) * sx).rounded()), whole.width - cut.width)
        let top = min(Int((Double(region.y) * sy).rounded()), whole.height - cut.height)
        return RegionCut(whole: whole, window: Rect(x: left, y: top, width: cut.width, height: cut.height))
    }

    /// Decodes the source resized to exactly `size`, with shrink-on-load (for JPEG by
    /// `ShrinkOnLoad.fast` when `fastShrink`, else libvips' choice), autorotated, an
    /// embedded profile other than sRGB's converted to sRGB (after the resize, on the
    /// small image), into memory: every decode error, a truncated file included, is then
    /// this stage's, and later steps may read the pixels in any order (smartcrop does).
    /// The decode reads the file as it goes: past the deadline a read fails, and the
    /// failure is the timeout's, not the file's.
    func decodeResized(_ input: SourceInput, _ info: SourceInfo, to size: Size, fastShrink: Bool, deadline: Deadline)
        throws(ImagingError) -> VImage
    {
        if let t = info.trim, let untrimmed = info.untrimmed {
            // The whole upright source at the scale that makes the kept window `size`, and
            // that window cut out of it.
            var whole = info
            whole.trim = nil
            whole.size = untrimmed
            let (sx, sy) = (Double(size.width) / Double(t.width), Double(size.height) / Double(t.height))
            let all = Size(
                width: max(size.width, Int((Double(whole.size.width) * sx).rounded())),
                height: max(size.height, Int((Double(whole.size.height) * sy).rounded())))
            try checkWhole(all, frames: 1)
            let image = try decodeResized(input, whole, to: all, fastShrink: fastShrink, deadline: deadline)
            let x = min(Int((Double(t.x) * sx).rounded()), all.width - size.width)
            let y = min(Int((Double(t.y) * sy).rounded()), all.height - size.height)
            return try image.then("trim") {
                cvips_extract_area($0, $1, Int32(x), Int32(y), Int32(size.width), Int32(size.height))
            }
        }
        if let video = input.video {
            return try videoFrame(video, at: info.moment ?? 0, to: size, deadline: deadline)
        }
        let source = try VSource(input, deadline: deadline)
        func decoding(_ body: (UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> Int32) throws(ImagingError)
            -> VImage
        {
            do throws(ImagingError) {
                return try VImage.make(
                    .decode,
                    AspectError(.unsupportedSource, "the source cannot be decoded: it is corrupt or truncated"),
                    body)
            } catch {
                if source.expired || deadline.passed { throw deadline.error }
                throw error
            }
        }
        let (width, height) = (Int32(size.width), Int32(size.height))
        let failOn = Int32(VIPS_FAIL_ON_ERROR.rawValue)
        let shrink = info.format == "jpeg" && fastShrink ? ShrinkOnLoad.fast(from: info.size, to: size) : 1
        let toSRGB: Int32 = info.profile == .other && info.keptProfile == nil ? 1 : 0
        let noRotate: Int32 = info.noRotate ? 1 : 0
        var lazy = try decoding { out in
            if shrink > 1 {
                return cvips_thumbnail_jpeg_force(
                    source.pointer, out, width, height, Int32(shrink), failOn, toSRGB, noRotate)
            }
            if let bg = info.flattenFirst, !info.embeddedThumbnail {
                return cvips_thumbnail_flattened(
                    source.pointer, out, width, height, Int32(info.page - 1), failOn, toSRGB, noRotate,
                    [Double(bg.red), Double(bg.green), Double(bg.blue)], 3)
            }
            return cvips_thumbnail_force(
                source.pointer, out, width, height, Int32(info.page - 1), failOn, toSRGB, noRotate,
                info.embeddedThumbnail ? 1 : 0)
        }
        if info.format == "pdf", lazy.hasAlpha {
            lazy = try lazy.then("flatten") { cvips_flatten($0, $1, [255, 255, 255], 3) }
        }
        let decoded = try decoding { cvips_copy_memory(lazy.pointer, $0) }
        // PQ or HLG: to SDR on the resized pixels (SPEC: Colour and metadata).
        guard let hdr = info.hdr else { return decoded }
        return try ToneMap.toSDR(decoded, hdr)
    }
}

/// JPEG shrink-on-load: libjpeg decodes at 1/2, 1/4 or 1/8 of the size in its inverse
/// DCT, far cheaper than decoding whole and resizing.
public enum ShrinkOnLoad {
    /// The largest of 8, 4 and 2 that the smaller of the two scales allows, else 1: the
    /// rule of sharp's `fastShrinkOnLoad` and of imgproxy. libvips' own thumbnail leaves
    /// at least a factor of two for the resize after it, so it loads twice as large.
    /// Sizes are as displayed, both of them (the ratios are the same stored).
    public static func fast(from source: Size, to target: Size) -> Int {
        guard target.width > 0, target.height > 0 else { return 1 }
        let scale = min(
            Double(source.width) / Double(target.width), Double(source.height) / Double(target.height))
        return [8, 4, 2].first { scale >= Double($0) } ?? 1
    }
}
