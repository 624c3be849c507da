import CVips
import Core

/// Decoded pixels: 8-bit, `bands` bytes per pixel, row by row.
public struct RawImage: Equatable, Sendable {
    public var width: Int
    public var height: Int
    public var bands: Int
    public var pixels: [UInt8]

    public init(width: Int, height: Int, bands: Int, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.bands = bands
        self.pixels = pixels
    }

    /// Every pixel `colour` (its count of values is the bands).
    public init(width: Int, height: Int, filledWith colour: [UInt8]) {
        self.init(
            width: width, height: height, bands: colour.count,
            pixels: Array((0..<(width * height)).map { _ in colour }.joined()))
    }

    /// The bands of the pixel at (x, y).
    public func pixel(_ x: Int, _ y: Int) -> [UInt8] {
        let i = (y * width + x) * bands
        return Array(pixels[i..<i + bands])
    }
}

/// Whole-image encode and decode outside the thumbnail pipeline: for the tests' own
/// fixtures and for checking what the service produced.
public enum ImageFile {
    /// The container formats that `encode` writes.
    public enum Container: String, Sendable {
        case jpeg, png, webp, gif, avif, tiff
    }

    /// How a fixture carries an ICC profile.
    public enum Profile: Sendable {
        /// The pixels are taken to be in this profile's space, unchanged, and it is embedded.
        case tag([UInt8])
        /// libvips (LittleCMS) converts the sRGB pixels into the space of the profile in
        /// this file, and embeds it.
        case convertFromSRGB(path: String)
    }

    /// Encodes pixels. `orientation` writes an EXIF orientation tag (JPEG), `cmyk`
    /// converts to CMYK first (JPEG), `profile` embeds an ICC profile, `pageHeight` makes
    /// an animation of frames stacked vertically (GIF, WebP); metadata is kept.
    public static func encode(
        _ raw: RawImage, as container: Container, quality: Int = 95, orientation: Int? = nil, cmyk: Bool = false,
        profile: Profile? = nil, pageHeight: Int? = nil, delays: [Int32] = [], loop: Int32 = 0
    ) throws(ImagingError) -> [UInt8] {
        try Vips.start()
        var image = try VImage.fromPixels(raw.pixels, width: raw.width, height: raw.height, bands: raw.bands)
        if raw.bands >= 3 {
            image = try image.then("copy") { cvips_colourspace($0, $1, VIPS_INTERPRETATION_sRGB) }
        }
        if cmyk { image = try image.then("cmyk") { cvips_colourspace($0, $1, VIPS_INTERPRETATION_CMYK) } }
        switch profile {
        case .tag(let bytes):
            image = try image.then("icc") { cvips_set_icc_profile($0, $1, bytes, bytes.count) }
        case .convertFromSRGB(let path):
            image = try image.then("icc_transform") { cvips_icc_transform($0, $1, path, "srgb") }
        case nil: break
        }
        if let orientation { vips_image_set_int(image.pointer, "orientation", Int32(orientation)) }
        if let pageHeight {
            image = try image.then("copy") { cvips_copy($0, $1) }
            delays.withUnsafeBufferPointer {
                cvips_set_animation(image.pointer, Int32(pageHeight), $0.baseAddress, Int32($0.count), loop)
            }
        }
        let q = Int32(quality)
        let bytes = takeBuffer { buffer, length in
            switch container {
            case .jpeg: cvips_jpegsave(image.pointer, buffer, length, q, 0, 0, 0)
            case .png: cvips_pngsave(image.pointer, buffer, length, 6, 0)
            case .webp: cvips_webpsave(image.pointer, buffer, length, q, 0)
            case .gif: cvips_gifsave(image.pointer, buffer, length)
            case .avif: cvips_avifsave(image.pointer, buffer, length, q, 0)
            case .tiff: cvips_tiffsave(image.pointer, buffer, length)
            }
        }
        guard let bytes else {
            throw ImagingError(.encode, AspectError(.internalError, "encoding failed"), detail: Vips.takeError())
        }
        return bytes
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
