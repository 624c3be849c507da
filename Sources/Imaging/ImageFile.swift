internal import CVips
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

/// Whole-image encode outside the thumbnail pipeline: the sample images (`aspect samples`)
/// and the tests' fixtures. The tests' readers (decode, profile, metadata, animation) live
/// in the test support target ImagingTestSupport.
public enum ImageFile {
    /// The container formats that `encode` writes.
    public enum Container: String, Sendable {
        case jpeg, png, webp, gif, avif, jxl, tiff
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
    /// an animation of frames stacked vertically (GIF, WebP), `exif` sets EXIF tags by
    /// libvips' field names (`exif-ifd0-Artist`), `xmp` an XMP packet; metadata is kept.
    public static func encode(
        _ raw: RawImage, as container: Container, quality: Int = 95, orientation: Int? = nil, cmyk: Bool = false,
        profile: Profile? = nil, pageHeight: Int? = nil, delays: [Int32] = [], loop: Int32 = 0,
        exif: [String: String] = [:], xmp: String? = nil
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
        if !exif.isEmpty || xmp != nil {
            image = try image.then("copy") { cvips_copy($0, $1) }
            // libvips writes the EXIF block from `exif-ifdN-Name` fields.
            for (name, value) in exif { vips_image_set_string(image.pointer, name, value) }
            if let xmp {
                let bytes = Array(xmp.utf8)
                bytes.withUnsafeBytes { vips_image_set_blob_copy(image.pointer, "xmp-data", $0.baseAddress, $0.count) }
            }
        }
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
            case .avif: cvips_avifsave(image.pointer, buffer, length, q, 0, Int32(Defaults.Output.avifEffort))
            case .jxl: cvips_jxlsave(image.pointer, buffer, length, q, 0)
            case .tiff: cvips_tiffsave(image.pointer, buffer, length)
            }
        }
        guard let bytes else {
            throw ImagingError(.encode, AspectError(.internalError, "encoding failed"), detail: Vips.takeError())
        }
        return bytes
    }
}
