import CVips
import Core

/// Encoding to the output formats, always with every piece of metadata stripped.
enum Encoder {
    /// PNG's zlib level: 6 is libpng's own default, a fair balance of size and time.
    static let pngCompression: Int32 = 6

    static func encode(_ image: VImage, format: ImageFormat, quality: Int?) throws(ImagingError) -> [UInt8] {
        let q = Int32(quality ?? format.defaultQuality ?? 80)
        if format == .avif, !avifAvailable {
            throw ImagingError(.encode, unavailable)
        }
        let bytes = takeBuffer { buffer, length in
            switch format {
            case .jpeg: cvips_jpegsave(image.pointer, buffer, length, q, 1, 1, 1)
            case .png: cvips_pngsave(image.pointer, buffer, length, pngCompression, 1)
            case .webp: cvips_webpsave(image.pointer, buffer, length, q, 1)
            case .avif: cvips_avifsave(image.pointer, buffer, length, q, 1)
            }
        }
        guard let bytes else {
            throw ImagingError(.encode, AspectError(.internalError, "encoding the image failed"), detail: Vips.takeError())
        }
        return bytes
    }

    static let unavailable = AspectError(
        .badParam, "format=avif is not available: this server's libvips has no AV1 encoder; ask for webp, png or jpeg")

    /// Whether this libvips can write AVIF: tried once, on a tiny image.
    static let avifAvailable: Bool = {
        guard let tiny = try? VImage.fromPixels([UInt8](repeating: 128, count: 8 * 8 * 3), width: 8, height: 8, bands: 3)
        else { return false }
        let ok = takeBuffer { cvips_avifsave(tiny.pointer, $0, $1, 50, 1) } != nil
        _ = Vips.takeError()
        return ok
    }()
}
