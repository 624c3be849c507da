internal import CVips
import Core
import Foundation
import Syscalls

// Video sources, opened and decoded by FFmpeg (Video.swift): the header, a poster, a
// preview of N frames.
extension Thumbnailer {
    /// A video's header by FFmpeg: the upright frame size (its pixels held to
    /// `limits.maxSourcePixels` before any decode), the duration, codec and rate.
    func openVideo(_ file: OpenFile, container: String, bytes: Int64, deadline: Deadline)
        throws(ImagingError) -> (input: SourceInput, info: SourceInfo)
    {
        guard limits.formats.contains(container) else {
            throw ImagingError(
                .header,
                AspectError(
                    .unsupportedSource,
                    "the source is \(container) video, which this service does not decode; it decodes "
                        + limits.formats.sorted().joined(separator: ", ")))
        }
        let video = try VideoSource(file, deadline: deadline)
        let stored = video.storedSize
        try checkPixels(stored, "the video's frames are")
        var info = SourceInfo(
            size: video.uprightSize, storedSize: stored, orientation: 1, hasAlpha: false, format: container,
            bytes: bytes)
        info.video = video.videoFacts
        return (SourceInput(file, video: video), info)
    }

    /// A video's hover preview (SPEC: Video): one frame decoded at each of the order's
    /// moments, by seeking, never by decoding the whole clip; each resized and taken
    /// through the still's steps; shown `frameDelayMs` each, looping forever.
    func renderVideoPreview(_ input: SourceInput, source info: SourceInfo, order: RenderOrder, deadline: Deadline)
        throws(ImagingError) -> [UInt8]
    {
        guard let video = input.video else {
            throw ImagingError(.process, AspectError(.internalError, "processing the video failed"))
        }
        let plan = order.plan
        let count = order.moments.count
        let (cut, decoded) = try framesDecoded(plan, count: count)
        let delays = [Int32](repeating: Int32(order.frameDelayMs), count: count)
        return try animate(
            count: count, cut: cut, plan: plan, format: order.format, quality: order.quality,
            maxBytes: order.maxBytes, delays: delays, loop: 0,
            deadline: deadline
        ) { i throws(ImagingError) in
            try videoFrame(video, at: order.moments[i], to: decoded, deadline: deadline)
        }
    }

    /// A video's storyboard sheet (SPEC: Video): the frame at each of the order's moments
    /// through the still's steps, as a preview's are, laid out on the grid left to right
    /// then top to bottom; the last sheet's empty places black (transparent where the
    /// tiles have alpha); then encoded as any still.
    func renderStoryboard(
        _ input: SourceInput, source info: SourceInfo, order: RenderOrder, grid: Grid, deadline: Deadline
    ) throws(ImagingError) -> Encoder.Encoded {
        guard let video = input.video else {
            throw ImagingError(.process, AspectError(.internalError, "processing the video failed"))
        }
        let plan = order.plan
        let (cut, decoded) = try framesDecoded(plan, count: order.moments.count)
        var tiles: [VImage] = []
        for moment in order.moments {
            try deadline.check()
            var each = Frame(
                try videoFrame(video, at: moment, to: decoded, deadline: deadline), plan: plan, format: order.format,
                cut: cut, deadline: deadline)
            try runSteps(&each)
            tiles.append(each.image)
        }
        let failed = AspectError(.internalError, "processing the storyboard failed")
        var pointers: [UnsafeMutablePointer<VipsImage>?] = tiles.map { $0.pointer }
        let joined = try VImage.make(.process, failed) { out in
            cvips_arrayjoin_grid(&pointers, Int32(pointers.count), Int32(min(grid.columns, tiles.count)), out)
        }
        let sheet = order.resultSize
        let background = [Double](repeating: 0, count: joined.bands)
        let whole = try joined.then("embed") {
            cvips_embed($0, $1, 0, 0, Int32(sheet.width), Int32(sheet.height), background, Int32(background.count))
        }
        let encoded = try timed("encode") { () throws(ImagingError) in
            try Encoder.encode(
                whole, format: order.format, quality: order.quality, maxBytes: order.maxBytes,
                keepCopyright: limits.keepCopyright, autoQuality: order.autoQuality, best: order.best,
                avifEffort: limits.avifEffort)
        }
        withExtendedLifetime(tiles) {}
        return encoded
    }

    /// The frame of a video at `seconds`, upright, resized to exactly `size`, in memory.
    func videoFrame(_ video: VideoSource, at seconds: Double, to size: Size, deadline: Deadline)
        throws(ImagingError) -> VImage
    {
        let frame = try video.frame(at: seconds, maxDecodeSeconds: limits.maxVideoSeconds, deadline: deadline)
        let resized = try frame.then("thumbnail") {
            cvips_thumbnail_image_force($0, $1, Int32(size.width), Int32(size.height))
        }
        return try resized.then("copy") { cvips_copy_memory($0, $1) }
    }
}
