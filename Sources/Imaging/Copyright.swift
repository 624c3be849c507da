internal import CVips
import Core
import SVG

/// The source's copyright and artist fields (SPEC: Colour and metadata, `output.keepCopyright`):
/// EXIF Copyright and Artist, and XMP `dc:rights` and `dc:creator`, read from the decoded
/// image's metadata and written onto an output that carries nothing else.
struct Copyright: Equatable, Sendable {
    var exifCopyright: String?
    var exifArtist: String?
    var xmpRights: [String] = []
    var xmpCreators: [String] = []

    var isEmpty: Bool { exifCopyright == nil && exifArtist == nil && xmpRights.isEmpty && xmpCreators.isEmpty }

    /// What `image` carries of them (nil when nothing).
    static func read(from image: VImage) -> Copyright? {
        var found = Copyright()
        if let exif = blob(image, "exif-data") {
            let tags = IFD0.asciiTags(exif, [0x8298, 0x013B])
            found.exifCopyright = tags[0x8298]
            found.exifArtist = tags[0x013B]
        }
        if let xmp = blob(image, "xmp-data") {
            (found.xmpRights, found.xmpCreators) = XMP.dublinCoreRights(xmp)
        }
        return found.isEmpty ? nil : found
    }

    static func blob(_ image: VImage, _ name: String) -> [UInt8]? {
        guard vips_image_get_typeof(image.pointer, name) != 0 else { return nil }
        var data: UnsafeRawPointer?
        var length = 0
        guard vips_image_get_blob(image.pointer, name, &data, &length) == 0, let data, length > 0 else { return nil }
        return Array(UnsafeRawBufferPointer(start: data, count: length))
    }

    /// Writes them onto `image`, which must carry no other metadata and not be shared:
    /// libvips makes the EXIF block from the two fields; the XMP packet holds these alone.
    func apply(to image: VImage) {
        if let exifCopyright { vips_image_set_string(image.pointer, "exif-ifd0-Copyright", exifCopyright) }
        if let exifArtist { vips_image_set_string(image.pointer, "exif-ifd0-Artist", exifArtist) }
        guard !xmpRights.isEmpty || !xmpCreators.isEmpty else { return }
        let packet = Array(xmpPacket.utf8)
        packet.withUnsafeBytes { vips_image_set_blob_copy(image.pointer, "xmp-data", $0.baseAddress, $0.count) }
    }

    var xmpPacket: String {
        func escaped(_ s: String) -> String {
            s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;")
        }
        var body = ""
        if !xmpRights.isEmpty {
            body += "<dc:rights><rdf:Alt>"
            body += xmpRights.map { "<rdf:li xml:lang=\"x-default\">\(escaped($0))</rdf:li>" }.joined()
            body += "</rdf:Alt></dc:rights>"
        }
        if !xmpCreators.isEmpty {
            body += "<dc:creator><rdf:Seq>" + xmpCreators.map { "<rdf:li>\(escaped($0))</rdf:li>" }.joined()
            body += "</rdf:Seq></dc:creator>"
        }
        return
            "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">"
            + "<rdf:Description rdf:about=\"\" xmlns:dc=\"\(XMP.dublinCore)\">\(body)</rdf:Description></rdf:RDF>"
            + "</x:xmpmeta>"
    }
}

/// The first image file directory of an EXIF block (a TIFF structure, after an optional
/// `Exif\0\0`), read for its ASCII tags.
enum IFD0 {
    static func asciiTags(_ exif: [UInt8], _ wanted: Set<Int>) -> [Int: String] {
        var b = exif[...]
        if b.starts(with: Array("Exif\0\0".utf8)) { b = b.dropFirst(6) }
        let t = Array(b)
        guard t.count >= 8 else { return [:] }
        let little = t[0] == 0x49
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= t.count else { return nil }
            return little ? Int(t[at]) | Int(t[at + 1]) << 8 : Int(t[at]) << 8 | Int(t[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let a = u16(at), let b = u16(at + 2) else { return nil }
            return little ? a | b << 16 : a << 16 | b
        }
        guard let ifd = u32(4), let count = u16(ifd) else { return [:] }
        var found: [Int: String] = [:]
        for i in 0..<min(count, 1000) {
            let entry = ifd + 2 + i * 12
            guard let tag = u16(entry), wanted.contains(tag), u16(entry + 2) == 2, let n = u32(entry + 4), n > 0
            else { continue }
            let at = n <= 4 ? entry + 8 : (u32(entry + 8) ?? -1)
            guard at >= 0, at + n <= t.count else { continue }
            let bytes = t[at..<(at + n)].prefix { $0 != 0 }
            let value = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            if !value.isEmpty { found[tag] = value }
        }
        return found
    }
}
