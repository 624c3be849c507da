internal import CAV
internal import CVips
import Core

// A preview as a video (SPEC: Video, "Previews as video"): the animation's frames, made
// as for an animated WebP, to H.264 in MP4 or VP9 in WebM by FFmpeg's libraries.
extension Encoder {
    /// The most bytes a preview video may take: the default `limits.maxResultBytes`, past
    /// which a worker's answer would not be taken anyway.
    static let maxVideoBytes = Int(Defaults.Limits.maxResultBytes)

    /// `strip`: the frames one above the other, `animation.pageHeight` each, shown
    /// `animation.delays` ms each (a missing or non-positive delay: 100 ms). Any alpha is
    /// flattened onto white (a video has none); the sides are cut down to even, as yuv420p
    /// needs (the last column or row goes).
    static func video(_ strip: VImage, format: ImageFormat, animation: Animation) throws(ImagingError) -> [UInt8] {
        let failed = AspectError(.internalError, "encoding the preview as \(format.rawValue) failed")
        var image = try Pipeline.toSRGB(strip)
        if image.bands == 4 || image.bands == 2 {
            let white: [Double] = [255, 255, 255]
            let opaque = image
            image = try opaque.then("flatten") { cvips_flatten($0, $1, white, 3) }
            image = try Pipeline.toSRGB(image)
        }
        if image.bands == 1 {
            let grey = image
            image = try grey.then("colourspace") { cvips_colourspace($0, $1, VIPS_INTERPRETATION_sRGB) }
        }
        let (width, pageHeight) = (image.width, animation.pageHeight)
        guard image.bands == 3, pageHeight >= 2, width >= 2, image.height % pageHeight == 0 else {
            throw ImagingError(.encode, failed, detail: "\(image.width)×\(image.height) in \(image.bands) bands")
        }
        let count = image.height / pageHeight
        let (w, h) = (width & ~1, pageHeight & ~1)
        let durations = (0..<count).map { i -> Int32 in
            let d = i < animation.delays.count ? animation.delays[i] : 0
            return d > 0 ? d : 100
        }
        var bytes: UnsafeMutablePointer<UInt8>?
        var length = 0
        func encode(_ rgb: UnsafeRawBufferPointer) -> Int32 {
            cav_encode_preview(
                format == .webm ? 1 : 0, rgb.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(count), Int32(w),
                Int32(h), durations, maxVideoBytes, &bytes, &length)
        }
        // Even sides already (the usual case): the frames as they lie, no copy; else each
        // frame's last column or row left out.
        let status =
            w == width && h == pageHeight
            ? try image.withPixels(encode)
            : try image.withPixels { pixels in
                var rgb = [UInt8]()
                rgb.reserveCapacity(count * w * h * 3)
                for frame in 0..<count {
                    for row in 0..<h {
                        let from = ((frame * pageHeight + row) * width) * 3
                        rgb += pixels[from..<(from + w * 3)]
                    }
                }
                return rgb.withUnsafeBytes(encode)
            }
        guard status == 0, let bytes else { throw ImagingError(.encode, failed) }
        defer { free(bytes) }
        return Array(UnsafeBufferPointer(start: bytes, count: length))
    }
}
