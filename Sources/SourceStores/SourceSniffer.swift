/// Tells by its first bytes whether a download can be a source at all, so that an origin's
/// HTML error page sent with a 200, or an archive, is refused (415) at once rather than
/// kept in the source cache. The list is of the containers a source may come in (the
/// decoders' own allowlist decides later what is served): JPEG, PNG, GIF, WebP, TIFF, the
/// ISO media family (HEIF, AVIF, MP4, MOV), JPEG XL, Matroska/WebM, PDF, and XML (SVG).
enum SourceSniffer {
    /// How many bytes it looks at.
    static let prefixLength = 64

    /// Nil when `prefix` starts like a source; else what it looks like, for the message.
    static func notAnImage(_ prefix: [UInt8]) -> String? {
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            prefix.count >= offset + magic.count && prefix[offset..<offset + magic.count].elementsEqual(magic)
        }
        let ascii = { (text: String) in Array(text.utf8) }
        let images: [[UInt8]] = [
            [0xFF, 0xD8, 0xFF], [0x89, 0x50, 0x4E, 0x47], ascii("GIF8"), ascii("II*\u{0}"), ascii("MM\u{0}*"),
            [0xFF, 0x0A], [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20], [0x1A, 0x45, 0xDF, 0xA3], ascii("%PDF-"),
        ]
        if images.contains(where: { starts($0) }) { return nil }
        if starts(ascii("RIFF")), starts(ascii("WEBP"), at: 8) { return nil }
        if starts(ascii("ftyp"), at: 4) { return nil }
        // Text: XML (an SVG) passes; HTML, JSON and the rest do not.
        let text = String(
            decoding: prefix.drop { [0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }, as: UTF8.self
        )
        .lowercased()
        if text.hasPrefix("<?xml") || text.hasPrefix("<svg") { return nil }
        if text.hasPrefix("<!doctype html") || text.hasPrefix("<html") || text.hasPrefix("<head")
            || text.hasPrefix("<body") || text.hasPrefix("<!--")
        {
            return "an HTML page"
        }
        if starts([0x1F, 0x8B]) { return "gzip-compressed data" }
        if starts(ascii("PK\u{3}\u{4}")) { return "a ZIP archive" }
        if text.hasPrefix("{") || text.hasPrefix("[") { return "JSON" }
        if prefix.isEmpty { return "an empty body" }
        return "no image format"
    }
}
