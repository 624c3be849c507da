import Foundation

extension ThumbRequest {
    /// The request as normalised parameters: defaults filled in, what has no effect left
    /// out, numbers in one spelling, `w`+`ratio` and `h`+`ratio` turned into the box they
    /// name. Two requests that must give the same image give the same pairs, so their
    /// `canonical` strings (the basis of the cache key) are equal. `sig` is never part.
    public var normalizedPairs: [(name: String, value: String)] {
        var p: [(name: String, value: String)] = [("src", src)]
        if page != 1 { p.append(("page", "\(page)")) }
        if let trim { p.append(("trim", trim.text)) }
        if !autoRotate { p.append(("autorotate", "0")) }
        if let keepCopyright { p.append(("copyright", keepCopyright ? "1" : "0")) }
        if let planner {
            p.append((planner.rules.name, planner.rules.text))
        } else {
            p += nativeGeometryPairs
        }
        if let background { p.append(("bg", background.description)) }
        p.append(("format", format.rawValue))
        if let quality { p.append(("q", "\(quality)")) }
        if autoQuality { p.append(("q", "auto")) }
        if !formatQuality.isEmpty {
            p.append(
                ("fq", formatQuality.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")))
        }
        if let maxBytes { p.append(("maxbytes", "\(maxBytes)")) }
        if saveData { p.append(("save-data", "on")) }
        if let blur { p.append(("blur", decimalString(blur))) }
        if let sharpen { p.append(("sharpen", decimalString(sharpen))) }
        if grayscale { p.append(("grayscale", "1")) }
        if raw { p.append(("raw", "1")) }
        if keepProfile { p.append(("profile", "keep")) }
        if embeddedThumbnail { p.append(("thumbnail", "embedded")) }
        if !passthrough.isEmpty { p.append(("passthrough", passthrough.sorted().joined(separator: ","))) }
        if extend { p.append(("extend", "1")) }
        if faces { p.append(("faces", "1")) }
        if let pixelate { p.append(("pixelate", "\(pixelate)")) }
        if let watermark { p.append(("wm", watermark)) }
        if let padding {
            p.append(("padding", "\(padding.top),\(padding.right),\(padding.bottom),\(padding.left)"))
        }
        if firstFrameOnly { p.append(("frames", "1")) }
        if let frameCount { p.append(("frames", "\(frameCount)")) }
        if let time { p.append(("t", decimalString(time))) }
        if let tiles { p.append(("tiles", tiles.description)) }
        if let every { p.append(("every", decimalString(every))) }
        if tiles != nil, sheet > 0 { p.append(("sheet", "\(sheet)")) }
        return p
    }

    /// `crop` … `shape`: the geometry in the native parameters.
    private var nativeGeometryPairs: [(name: String, value: String)] {
        var p: [(name: String, value: String)] = []
        if let region {
            p.append(
                ("crop", [region.x, region.y, region.width, region.height].map(decimalString).joined(separator: ",")))
        }
        if rotate != 0 { p.append(("rotate", "\(rotate)")) }
        if let flip { p.append(("flip", flip.rawValue)) }
        switch (width, height, ratio) {
        case (let w?, nil, let r?):
            p += [("w", "\(w)"), ("h", "\(max(1, Rounding.int(r.height(forWidth: Double(w)) ?? 1)))")]
        case (nil, let h?, let r?):
            p += [("w", "\(max(1, Rounding.int(r.width(forHeight: Double(h)) ?? 1)))"), ("h", "\(h)")]
        default:
            if let width { p.append(("w", "\(width)")) }
            if let height { p.append(("h", "\(height)")) }
            if let ratio { p.append(("ratio", ratio.description)) }
        }
        p.append(("mode", mode.rawValue))
        if mode == .fill || mode == .pad {
            p.append(("gravity", gravity.rawValue))
            if gravity == .focus { p += [("fx", decimalString(focusX)), ("fy", decimalString(focusY))] }
        } else if extend {
            // The padding `extend` adds is placed by a compass gravity (else centred).
            p.append(("gravity", (gravity.isCompass ? gravity : .center).rawValue))
        }
        p.append(("upscale", upscale ? "1" : "0"))
        p.append(("dpr", decimalString(dpr)))
        if let shape {
            p.append(("shape", shape.rawValue))
            if shape == .rounded { p.append(("radius", "\(radius ?? ThumbRequest.defaultRadius)")) }
        }
        return p
    }

    /// The canonical form of the normalised request.
    public var canonical: String { Canonical.form(normalizedPairs) }
}
