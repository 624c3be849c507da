import Core

/// `Content-Disposition` as imgproxy writes it (`httpheaders/cdv.go`): `inline` or
/// `attachment`, and a file name of the source's stem (or `filename`) and the result's
/// extension, with `"` escaped as `%22`.
struct Disposition: Sendable, Equatable {
    var stem: String
    var attachment: Bool

    /// The last segment of `src` without its extension; `image` when nothing is left.
    static func stem(of src: String) -> String {
        let name = src.split(separator: "/").last.map(String.init) ?? ""
        let stem = name.lastIndex(of: ".").map { String(name[..<$0]) } ?? name
        return stem.isEmpty ? "image" : stem
    }

    func value(contentType: String) -> String {
        let ext = ImageFormat.allCases.first { $0.mimeType == contentType }.map { "." + $0.fileExtension } ?? ""
        let name = stem.replacingOccurrences(of: "\"", with: "%22")
        return "\(attachment ? "attachment" : "inline"); filename=\"\(name)\(ext)\""
    }
}
