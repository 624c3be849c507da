import CVips
import Core

@testable import Imaging

/// The tests' readers of encoded images, outside the thumbnail pipeline: whole-image
/// decodes (as stored, or converted to sRGB by LittleCMS as a reference), an image's ICC
/// profile and metadata fields, and what an animation holds. Test support only: the
/// service never decodes a whole image this way.
extension ImageFile {
    /// A source of any depth (a 16-bit PNG, say) written again losslessly as HEIF, AVIF
    /// (`bitdepth` 8, 10 or 12) or JPEG XL (at its own depth).
    public enum DeepContainer: Sendable { case heic, avif, jxl }

    public static func transcodeLosslessly(_ bytes: [UInt8], to container: DeepContainer, bitdepth: Int = 12)
        throws(ImagingError) -> [UInt8]
    {
        try Vips.start()
        let image = try open(bytes)
        let out = takeBuffer { buffer, length in
            switch container {
            case .jxl: cvips_jxlsave_lossless(image.pointer, buffer, length)
            case .avif: cvips_heifsave_deep(image.pointer, buffer, length, 1, Int32(bitdepth))
            case .heic: cvips_heifsave_deep(image.pointer, buffer, length, 0, Int32(bitdepth))
            }
        }
        guard let out else {
            throw ImagingError(.encode, AspectError(.internalError, "encoding failed"), detail: Vips.takeError())
        }
        return out
    }

    /// Decodes any image libvips reads, as stored (no autorotation), to 8-bit sRGB with
    /// alpha kept.
    public static func decode(_ bytes: [UInt8]) throws(ImagingError) -> RawImage {
        try Vips.start()
        let loaded = try open(bytes)
        let image = try Pipeline.toSRGB(loaded)
        return RawImage(width: image.width, height: image.height, bands: image.bands, pixels: try image.pixels())
    }

    /// Decodes as stored and converts from the embedded profile to sRGB by libvips' own
    /// LittleCMS transform, whole image, outside the thumbnail pipeline: the reference a
    /// thumbnail's colours are checked against.
    public static func decodeToSRGBByLittleCMS(_ bytes: [UInt8]) throws(ImagingError) -> RawImage {
        try Vips.start()
        let loaded = try open(bytes)
        let converted = try loaded.then("icc_transform") { cvips_icc_transform($0, $1, "srgb", "srgb") }
        let image = try Pipeline.toSRGB(converted)
        return RawImage(width: image.width, height: image.height, bands: image.bands, pixels: try image.pixels())
    }

    /// A metadata field of an encoded image as libvips shows it (`exif-ifd0-Artist`:
    /// "Jane (Jane, ASCII, 5 components, 5 bytes)"), or the text of a blob (`xmp-data`).
    public static func metadataText(_ bytes: [UInt8], _ name: String) throws(ImagingError) -> String? {
        try Vips.start()
        let image = try open(bytes)
        guard vips_image_get_typeof(image.pointer, name) != 0 else { return nil }
        var text: UnsafePointer<CChar>?
        if vips_image_get_string(image.pointer, name, &text) == 0, let text { return String(cString: text) }
        _ = Vips.takeError()
        var data: UnsafeRawPointer?
        var length = 0
        guard vips_image_get_blob(image.pointer, name, &data, &length) == 0, let data else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    /// The embedded ICC profile of an encoded image, if any.
    public static func iccProfile(_ bytes: [UInt8]) throws(ImagingError) -> [UInt8]? {
        try Vips.start()
        return try open(bytes).iccProfile
    }

    /// The names of the metadata fields libvips finds in an encoded image (`exif-data`,
    /// `xmp-data`, `icc-profile-data`, …), beyond the basic header.
    public static func metadataFields(_ bytes: [UInt8]) throws(ImagingError) -> [String] {
        try Vips.start()
        let image = try open(bytes)
        guard let fields = vips_image_get_fields(image.pointer) else { return [] }
        defer { g_strfreev(fields) }
        var names: [String] = []
        var i = 0
        while let name = fields[i] {
            names.append(String(cString: name))
            i += 1
        }
        return names
    }

    /// Every frame of an animation decoded, stacked top to bottom, as 8-bit sRGB.
    public static func decodeAllPages(_ bytes: [UInt8]) throws(ImagingError) -> RawImage {
        try Vips.start()
        let result = bytes.withUnsafeBytes { raw -> Result<RawImage, ImagingError> in
            Result { () throws(ImagingError) -> RawImage in
                let lazy = try VImage.make(.decode, AspectError(.unsupportedSource, "not an image")) {
                    cvips_load_buffer_pages(raw.baseAddress, raw.count, $0)
                }
                let image = try Pipeline.toSRGB(lazy)
                return RawImage(
                    width: image.size.width, height: image.size.height, bands: image.bands, pixels: try image.pixels())
            }
        }
        return try result.get()
    }

    /// What an encoded animation holds, read back by libvips with every frame loaded.
    public struct Animation: Equatable, Sendable {
        public var frames: Int
        public var width: Int
        public var pageHeight: Int
        public var delays: [Int32]
        public var loop: Int32
        public var bands: Int
    }

    public static func animation(_ bytes: [UInt8]) throws(ImagingError) -> Animation {
        try Vips.start()
        let result = bytes.withUnsafeBytes { raw -> Result<Animation, ImagingError> in
            Result { () throws(ImagingError) -> Animation in
                let image = try VImage.make(.decode, AspectError(.unsupportedSource, "not an image")) {
                    cvips_load_buffer_pages(raw.baseAddress, raw.count, $0)
                }
                var pageHeight: Int32 = 0
                var delays: UnsafePointer<Int32>?
                var count: Int32 = 0
                var loop: Int32 = 0
                cvips_get_animation(image.pointer, &pageHeight, &delays, &count, &loop)
                let h = pageHeight > 0 ? Int(pageHeight) : image.size.height
                return Animation(
                    frames: image.size.height / h, width: image.size.width, pageHeight: h,
                    delays: delays.map { Array(UnsafeBufferPointer(start: $0, count: Int(count))) } ?? [], loop: loop,
                    bands: image.bands)
            }
        }
        return try result.get()
    }

    /// Loads and decodes into memory while the bytes are alive: libvips reads a buffer
    /// lazily and does not copy it.
    private static func open(_ bytes: [UInt8]) throws(ImagingError) -> VImage {
        let result = bytes.withUnsafeBytes { raw -> Result<VImage, ImagingError> in
            Result { () throws(ImagingError) -> VImage in
                let lazy = try VImage.make(.decode, AspectError(.unsupportedSource, "not an image")) {
                    cvips_load_buffer(raw.baseAddress, raw.count, $0, Int32(VIPS_FAIL_ON_ERROR.rawValue))
                }
                return try VImage.make(.decode, AspectError(.unsupportedSource, "the image cannot be decoded")) {
                    cvips_copy_memory(lazy.pointer, $0)
                }
            }
        }
        return try result.get()
    }
}
