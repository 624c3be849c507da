import Core
import HTTP
import Stores
import Syscalls

// `raw` and `passthrough` (imgproxy's `raw` and `skip_processing`): the source's own bytes.
extension ServiceHandler {
    /// The MIME type of a source format as the loaders name it.
    static let sourceTypes: [String: String] = [
        "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp", "avif": "image/avif",
        "heif": "image/heif", "tiff": "image/tiff", "jxl": "image/jxl", "pdf": "application/pdf",
        "mp4": "video/mp4", "webm": "video/webm", "mkv": "video/x-matroska",
    ]

    /// The source's bytes as they are (its header read and its limits checked already, by
    /// `settling`), with an ETag of this version of it, a 304 for a matching one, and the
    /// type its header says.
    func sourceAnswer(_ known: CheckedRequest, _ identity: SourceIdentity, format: String) -> Route {
        let key = CacheKey(
            canonical: "source?" + known.parsed.src, source: identity, format: format, rendering: "as-is")
        var headers = commonHeaders(key, auto: false)
        let tag = Self.sourceTag(known.parsed.src)
        headers.append("Surrogate-Key", tag)
        headers.append("Cache-Tag", tag)
        if Self.matches(known.request.headers.values("If-None-Match"), key) {
            return .respond(HTTPResponse(status: 304, headers: headers, logNote: "source"))
        }
        let file: OpenFile
        switch sources.open(identity) {
        case .success(let f): file = f
        case .failure(let failure): return .respond(Self.error(failure))
        }
        guard let size = file.regularFileSize else {
            return .respond(Self.error(AspectError(.internalError, "the source is not a regular file")))
        }
        headers.append("Content-Type", Self.sourceTypes[format] ?? "application/octet-stream")
        return .respond(
            HTTPResponse(status: 200, headers: headers, body: .file(file, offset: 0, length: size), logNote: "source"))
    }
}
