internal import CVips
import Core
import Foundation
import Syscalls

// `trim` (SPEC: Before the geometry).
extension Thumbnailer {
    /// `trim` (SPEC: Before the geometry): the upright source decoded whole, and the border
    /// whose pixels lie within the threshold of the background (the trim's colour, else the
    /// top-left pixel's) in every channel found by libvips (`find_trim`, which smooths away
    /// single-pixel noise first; transparency flattened onto magenta first, as imgproxy
    /// does); with `equalHorizontal`/`equalVertical` the smaller of two opposite cuts is
    /// made on both sides. The source's size becomes what is left. A source that is all
    /// border is left whole. For stills: an animation's or a video's frames would each
    /// trim differently.
    func trimmed(_ input: SourceInput, _ info: SourceInfo, _ trim: Trim, deadline: Deadline)
        throws(ImagingError) -> SourceInfo
    {
        guard info.frames == 1, info.video == nil else {
            throw ImagingError(
                .header, AspectError(.badParam, "trim applies to still images; this source is animated or a video"))
        }
        try checkPixels(info.size, "trimming decodes the whole source:")
        let whole = try Pipeline.toSRGB(
            try decodeResized(input, info, to: info.size, fastShrink: false, deadline: deadline))
        var (left, top, width, height): (Int32, Int32, Int32, Int32) = (0, 0, 0, 0)
        let color = trim.color.map { [Double($0.red), Double($0.green), Double($0.blue)] } ?? []
        let found = color.withUnsafeBufferPointer {
            cvips_find_trim(
                whole.pointer, trim.threshold, color.isEmpty ? nil : $0.baseAddress, trim.bottomRight ? 1 : 0, &left,
                &top, &width, &height)
        }
        guard found == 0 else {
            throw ImagingError(
                .process, AspectError(.internalError, "finding the border failed"), detail: Vips.takeError())
        }
        var out = info
        guard width > 0, height > 0 else { return out }
        // imgproxy's equal_hor / equal_ver: the smaller cut of the two on both sides.
        if trim.equalHorizontal {
            let right = Int32(info.size.width) - left - width
            if right > left { width += right - left } else { (left, width) = (right, width + left - right) }
        }
        if trim.equalVertical {
            let bottom = Int32(info.size.height) - top - height
            if bottom > top { height += bottom - top } else { (top, height) = (bottom, height + top - bottom) }
        }
        guard Int(width) < info.size.width || Int(height) < info.size.height else { return out }
        out.trim = Rect(x: Int(left), y: Int(top), width: Int(width), height: Int(height))
        out.untrimmed = info.size
        out.size = Size(width: Int(width), height: Int(height))
        return out
    }
}
