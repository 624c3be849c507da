import Foundation

extension FormatChoice {
    /// The concrete format: the one named, or for `auto` JPEG XL when `autoJxl` and `accept`
    /// lists `image/jxl`, else AVIF when `autoAvif` and `accept` lists `image/avif`, else
    /// WebP when it lists `image/webp`, else PNG when the result has alpha, else JPEG.
    public func resolve(accept: String?, resultHasAlpha: Bool, autoAvif: Bool = false, autoJxl: Bool = false)
        -> ImageFormat
    {
        switch self {
        case .jpeg: .jpeg
        case .png: .png
        case .webp: .webp
        case .avif: .avif
        case .jxl: .jxl
        case .gif: .gif
        case .tiff: .tiff
        case .mp4: .mp4
        case .webm: .webm
        // Settled by the request's dialect where the source is known; unsettled, the
        // format a result of this kind would be without `Accept`.
        case .source: resultHasAlpha ? .png : .jpeg
        case .auto, .best:
            if autoJxl, let accept, AcceptHeader.accepts(accept, "image/jxl") {
                .jxl
            } else if autoAvif, let accept, AcceptHeader.accepts(accept, "image/avif") {
                .avif
            } else if let accept, AcceptHeader.accepts(accept, "image/webp") {
                .webp
            } else if resultHasAlpha {
                .png
            } else {
                .jpeg
            }
        }
    }
}

/// Just enough of RFC 9110's `Accept` to tell whether a media type is accepted by name:
/// listed, and not with `q=0`. Wildcards do not count: `*/*` does not promise WebP.
public enum AcceptHeader {
    /// What `format=auto`'s answer depends on in `accept`, as a tag for the cache key:
    /// `auto+jxl`, `auto+avif`, `auto+webp` or `auto`.
    public static func autoTag(_ accept: String?, autoAvif: Bool, autoJxl: Bool = false) -> String {
        guard let accept else { return "auto" }
        if autoJxl, accepts(accept, "image/jxl") { return "auto+jxl" }
        if autoAvif, accepts(accept, "image/avif") { return "auto+avif" }
        return accepts(accept, "image/webp") ? "auto+webp" : "auto"
    }

    public static func accepts(_ header: String, _ type: String) -> Bool {
        for item in header.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let media = parts.first, media.lowercased() == type else { continue }
            let q = parts.dropFirst().first { $0.lowercased().hasPrefix("q=") }
            if let q, let value = Double(q.dropFirst(2)), value <= 0 { return false }
            return true
        }
        return false
    }
}
