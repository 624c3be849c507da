internal import CVips
import Core
import Foundation
import Syscalls

// `/info`'s facts: a small upright decode, or the render's own.
extension Thumbnailer {
    /// The side `describe` decodes to, at most: what ThumbHash takes.
    public static let previewSide = 100

    /// What `/info` needs: the header (limits checked as for a render), and a decode by
    /// shrink-on-load to fit `previewSide` × `previewSide`, upright, in sRGB, as RGBA.
    public func describe(file: OpenFile, reading: SourceReading = SourceReading()) throws(ImagingError)
        -> SourceFacts
    {
        let deadline = Deadline.after(milliseconds: limits.processingTimeoutMs)
        var (input, info) = try open(file: file, reading: reading, deadline: deadline)
        if let trim = reading.trim { info = try trimmed(input, info, trim, deadline: deadline) }
        do throws(AspectError) { try info.description.check(page: reading.page) } catch {
            throw ImagingError(.header, error)
        }
        // A video's placeholders are its default frame's (SPEC: Video).
        if let video = info.video {
            info.moment = RenderOrder.defaultMoment(
                duration: video.duration, limits: RequestLimits(videoDefaultSeconds: limits.videoDefaultSeconds))
        }
        let small = Self.previewSize(info.size)
        let image = try decodeResized(input, info, to: small, fastShrink: true, deadline: deadline)
        var described = try facts(info, preview: image)
        if reading.faces { described.faces = try findFaces(input, info, deadline: deadline) }
        return described
    }

    /// The preview's size: the source's, shrunk to fit `previewSide` × `previewSide`.
    static func previewSize(_ size: Size) -> Size { fitting(size, previewSide) }

    /// `/info`'s facts, from a decode of the whole upright source at the preview's size.
    func facts(_ info: SourceInfo, preview decoded: VImage) throws(ImagingError) -> SourceFacts {
        let small = Self.previewSize(info.size)
        var image = try Pipeline.toSRGB(try Pipeline.exactSize(decoded, small))
        if !image.hasAlpha { image = try image.then("alpha") { cvips_bandjoin_const1($0, $1, 255) } }
        let rgba = try image.pixels()
        guard rgba.count == small.width * small.height * 4 else {
            throw ImagingError(
                .process, AspectError(.internalError, "describing the image failed"),
                detail: "preview has \(rgba.count) bytes for \(small)")
        }
        return SourceFacts(
            description: info.description, orientation: info.orientation, frames: info.frames, pages: info.pages,
            video: info.video, previewWidth: small.width, previewHeight: small.height, previewRGBA: rgba)
    }

    /// `/info`'s facts from a render's own decode (SPEC: Efficiency), when that decode is
    /// of the whole upright still source: the decoded image shrunk to the preview's size.
    /// Nil for a region, a turn, a trim, an animation or a video, whose decode is not that.
    func factsFromRender(_ resized: VImage, _ info: SourceInfo, _ plan: Plan) -> SourceFacts? {
        let small = Self.previewSize(info.size)
        // A decode smaller than the preview would have to be enlarged: describe's is better.
        // A decode flattened first has lost the alpha /info's placeholders show.
        guard !plan.reshapesSource, info.trim == nil, info.video == nil, info.frames == 1, info.flattenFirst == nil,
            resized.width >= small.width, resized.height >= small.height
        else { return nil }
        guard
            let preview = try? resized.then(
                "preview", { cvips_thumbnail_image_force($0, $1, Int32(small.width), Int32(small.height)) }),
            let facts = try? facts(info, preview: preview)
        else {
            _ = Vips.takeError()
            return nil
        }
        return facts
    }
}
