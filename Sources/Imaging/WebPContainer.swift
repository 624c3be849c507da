/// The RIFF container of a WebP file, just enough to drop metadata chunks.
///
/// Debian's libvips 8.14 writes a small generated EXIF chunk into every WebP, `strip`
/// or not (seen in FormatTests). SPEC allows no metadata, so the encoder's output goes
/// through `strippingMetadata`: the `EXIF`, `XMP ` and `ICCP` chunks are removed and
/// their flags cleared in the `VP8X` header. Layout per Google's WebP container spec:
/// `RIFF` size `WEBP`, then chunks of FourCC, little-endian size, data padded to even.
enum WebPContainer {
    static let metadataChunks: Set<String> = ["EXIF", "XMP ", "ICCP"]
    /// VP8X flag bits: ICC 0x20, EXIF 0x08, XMP 0x04.
    static let metadataFlags: UInt8 = 0x20 | 0x08 | 0x04

    /// The same image without metadata chunks; the input unchanged if it is not a
    /// well-formed WebP.
    static func strippingMetadata(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count >= 12, fourCC(bytes, 0) == "RIFF", fourCC(bytes, 8) == "WEBP" else { return bytes }
        var out = Array(bytes[0..<12])
        var i = 12
        while i + 8 <= bytes.count {
            let name = fourCC(bytes, i)
            let size = Int(bytes[i + 4]) | Int(bytes[i + 5]) << 8 | Int(bytes[i + 6]) << 16 | Int(bytes[i + 7]) << 24
            let end = i + 8 + size + (size & 1)
            guard end <= bytes.count else { return bytes }
            let chunk = bytes[i..<end]
            if name == "VP8X", size >= 1 {
                var header = Array(chunk)
                header[8] &= ~metadataFlags
                out += header
            } else if !metadataChunks.contains(name) {
                out += chunk
            }
            i = end
        }
        let riff = UInt32(out.count - 8)
        out[4] = UInt8(riff & 0xFF)
        out[5] = UInt8(riff >> 8 & 0xFF)
        out[6] = UInt8(riff >> 16 & 0xFF)
        out[7] = UInt8(riff >> 24 & 0xFF)
        return out
    }

    private static func fourCC(_ bytes: [UInt8], _ at: Int) -> String {
        String(decoding: bytes[at..<at + 4], as: UTF8.self)
    }
}
