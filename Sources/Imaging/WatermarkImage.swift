internal import CVips
import Core
import Syscalls

/// A watermark's image, read once at start-up: upright sRGB with alpha, 8 bits a band,
/// held in memory and scaled for each result that shows it.
public struct WatermarkImage: Sendable {
    public var size: Size
    /// RGBA, row by row.
    public var rgba: [UInt8]

    public init(size: Size, rgba: [UInt8]) {
        self.size = size
        self.rgba = rgba
    }
}

extension Thumbnailer {
    /// `watermark(file:)` of the file at `path`.
    public func watermark(path: String) throws(ImagingError) -> WatermarkImage {
        try watermark(file: OpenFile.opening(path))
    }

    /// Reads a watermark's image whole (any served format; an SVG sanitised and drawn at
    /// its intrinsic size), upright, as RGBA.
    public func watermark(file: OpenFile) throws(ImagingError) -> WatermarkImage {
        let deadline = Deadline.after(milliseconds: limits.processingTimeoutMs)
        let (input, info) = try open(file: file, reading: SourceReading(), deadline: deadline)
        guard info.frames == 1, info.video == nil else {
            throw ImagingError(
                .header, AspectError(.badParam, "a watermark must be a still image; this one is animated or a video"))
        }
        try checkPixels(info.size, "the watermark is")
        var image = try Pipeline.toSRGB(
            try Pipeline.exactSize(
                try decodeResized(input, info, to: info.size, fastShrink: false, deadline: deadline), info.size))
        if !image.hasAlpha { image = try image.then("alpha") { cvips_bandjoin_const1($0, $1, 255) } }
        return WatermarkImage(size: info.size, rgba: try image.pixels())
    }
}

extension Pipeline {
    /// The watermark scaled to its placement, its alpha times the opacity, composited over
    /// `image` (SPEC: Watermarks); the result has alpha only if `image` had.
    static func overlay(_ image: VImage, _ mark: WatermarkImage, at p: WatermarkPlacement) throws(ImagingError)
        -> VImage
    {
        let source = try VImage.fromPixels(mark.rgba, width: mark.size.width, height: mark.size.height, bands: 4)
        let r = p.rect
        var sized =
            source.size == r.size
            ? source
            : try source.then("watermark") { cvips_thumbnail_image_force($0, $1, Int32(r.width), Int32(r.height)) }
        if p.opacity < 1 {
            let colour = try sized.then("watermark") { cvips_extract_band($0, $1, 0, 3) }
            let alpha = try sized.then("watermark") { cvips_extract_band($0, $1, 3, 1) }
            let faded = try alpha.then("watermark") { cvips_linear1($0, $1, p.opacity, 0, 1) }
            sized = try colour.then("watermark") { cvips_bandjoin2($0, faded.pointer, $1) }
        }
        let composed = try image.then("watermark") {
            cvips_composite_over($0, sized.pointer, $1, Int32(r.x), Int32(r.y))
        }
        let out = image.hasAlpha ? composed : try composed.then("watermark") { cvips_extract_band($0, $1, 0, 3) }
        return try toSRGB(out)
    }
}
