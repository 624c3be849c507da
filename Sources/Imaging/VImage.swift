internal import CVips
import Core

/// The one owner of one `VipsImage` reference: released exactly once, in `deinit`.
/// Every operation returns a new owner; none is shared between threads.
final class VImage {
    let pointer: UnsafeMutablePointer<VipsImage>

    /// Takes over a reference the caller owned.
    init(owning pointer: UnsafeMutablePointer<VipsImage>) {
        self.pointer = pointer
    }

    deinit { g_object_unref(pointer) }

    var width: Int { Int(vips_image_get_width(pointer)) }
    var height: Int { Int(vips_image_get_height(pointer)) }
    var bands: Int { Int(vips_image_get_bands(pointer)) }
    var hasAlpha: Bool { vips_image_hasalpha(pointer) != 0 }
    var size: Size { Size(width: width, height: height) }
    var interpretation: VipsInterpretation { vips_image_get_interpretation(pointer) }
    var bandFormat: VipsBandFormat { vips_image_get_format(pointer) }

    /// The embedded ICC profile's bytes, if there is one.
    var iccProfile: [UInt8]? {
        var data: UnsafeRawPointer?
        var length = 0
        guard cvips_icc_profile(pointer, &data, &length) == 0, let data, length > 0 else { return nil }
        return Array(UnsafeRawBufferPointer(start: data, count: length))
    }

    /// Runs one operation that makes a new image; a failure is `stage`'s error.
    static func make(
        _ stage: ImagingError.Stage, _ error: @autoclosure () -> AspectError,
        _ body: (UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> Int32
    ) throws(ImagingError) -> VImage {
        var out: UnsafeMutablePointer<VipsImage>?
        let status = body(&out)
        guard status == 0, let out else {
            if let out { g_object_unref(out) }
            throw ImagingError(stage, error(), detail: Vips.takeError())
        }
        return VImage(owning: out)
    }

    /// An operation on this image, failing as an internal processing error.
    func then(
        _ what: String,
        _ body: (UnsafeMutablePointer<VipsImage>, UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> Int32
    )
        throws(ImagingError) -> VImage
    {
        try VImage.make(.process, AspectError(.internalError, "processing the image failed (\(what))")) {
            body(pointer, $0)
        }
    }

    /// A new uchar image from pixels, `bands` bytes per pixel, row by row.
    static func fromPixels(_ pixels: [UInt8], width: Int, height: Int, bands: Int) throws(ImagingError) -> VImage {
        let made = pixels.withUnsafeBytes { raw in
            vips_image_new_from_memory_copy(
                raw.baseAddress, raw.count, Int32(width), Int32(height), Int32(bands), VIPS_FORMAT_UCHAR)
        }
        guard let made else {
            throw ImagingError(
                .process, AspectError(.internalError, "making an image failed"), detail: Vips.takeError())
        }
        return VImage(owning: made)
    }

    /// The pixels, decoded: `bands` bytes per pixel, row by row (uchar images only).
    func pixels() throws(ImagingError) -> [UInt8] { try withPixels { Array($0) } }

    /// The pixels, as `pixels()` gives them, lent to `body` without a copy.
    func withPixels<R>(_ body: (UnsafeRawBufferPointer) -> R) throws(ImagingError) -> R {
        var length = 0
        guard let data = vips_image_write_to_memory(pointer, &length) else {
            throw ImagingError(
                .decode, AspectError(.unsupportedSource, "the image could not be decoded"), detail: Vips.takeError())
        }
        defer { g_free(data) }
        return body(UnsafeRawBufferPointer(start: data, count: length))
    }
}

/// Reads a libvips-allocated buffer into bytes and frees it.
func takeBuffer(_ body: (UnsafeMutablePointer<UnsafeMutableRawPointer?>, UnsafeMutablePointer<Int>) -> Int32)
    -> [UInt8]?
{
    var buffer: UnsafeMutableRawPointer?
    var length = 0
    guard body(&buffer, &length) == 0, let buffer else { return nil }
    defer { g_free(buffer) }
    return Array(UnsafeRawBufferPointer(start: buffer, count: length))
}
