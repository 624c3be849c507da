import Foundation

extension ThumbRequest {
    /// The request as normalised parameters: defaults filled in, what has no effect left
    /// out, numbers in one spelling, `w`+`ratio` and `h`+`ratio` turned into the box they
    /// name. Two requests that must give the same image give the same pairs, so their
    /// `canonical` strings (the basis of the cache key) are equal. `sig` is never part.
    public var normalizedPairs: [(name: String, value: String)] {
        var p: [(name: String, value: String)] = [("src", src)]
        if let region {
            p.append(
                ("crop", [region.x, region.y, region.width, region.height].map(decimalString).joined(separator: ",")))
        }
        if rotate != 0 { p.append(("rotate", "\(rotate)")) }
        if let flip { p.append(("flip", flip.rawValue)) }
        switch (width, height, ratio) {
        case (let w?, nil, let r?):
            p += [("w", "\(w)"), ("h", "\(max(1, Int(r.height(forWidth: Double(w)) ?? 1)))")]
        case (nil, let h?, let r?):
            p += [("w", "\(max(1, Int(r.width(forHeight: Double(h)) ?? 1)))"), ("h", "\(h)")]
        default:
            if let width { p.append(("w", "\(width)")) }
            if let height { p.append(("h", "\(height)")) }
            if let ratio { p.append(("ratio", ratio.description)) }
        }
        p.append(("mode", mode.rawValue))
        if mode == .fill || mode == .pad {
            p.append(("gravity", gravity.rawValue))
            if gravity == .focus { p += [("fx", decimalString(focusX)), ("fy", decimalString(focusY))] }
        }
        p.append(("upscale", upscale ? "1" : "0"))
        p.append(("dpr", decimalString(dpr)))
        if let shape {
            p.append(("shape", shape.rawValue))
            if shape == .rounded { p.append(("radius", "\(radius ?? ThumbRequest.defaultRadius)")) }
        }
        if let background { p.append(("bg", background.description)) }
        p.append(("format", format.rawValue))
        if let quality { p.append(("q", "\(quality)")) }
        if let blur { p.append(("blur", decimalString(blur))) }
        if let sharpen { p.append(("sharpen", decimalString(sharpen))) }
        if firstFrameOnly { p.append(("frames", "1")) }
        return p
    }

    /// The canonical form of the normalised request.
    public var canonical: String { Canonical.form(normalizedPairs) }
}

extension FormatChoice {
    /// The concrete format: the one named, or for `auto` AVIF when `autoAvif` and `accept`
    /// lists `image/avif`, else WebP when it lists `image/webp`, else PNG when the result
    /// has alpha, else JPEG.
    public func resolve(accept: String?, resultHasAlpha: Bool, autoAvif: Bool = false) -> ImageFormat {
        switch self {
        case .jpeg: .jpeg
        case .png: .png
        case .webp: .webp
        case .avif: .avif
        case .gif: .gif
        case .auto:
            if autoAvif, let accept, AcceptHeader.accepts(accept, "image/avif") {
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
    /// `auto+avif`, `auto+webp` or `auto`.
    public static func autoTag(_ accept: String?, autoAvif: Bool) -> String {
        guard let accept else { return "auto" }
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
