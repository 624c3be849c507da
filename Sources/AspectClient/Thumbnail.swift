import Foundation

/// A request for one thumbnail from an Aspect server, built step by step and turned into
/// the URL the server serves it at:
///
///     let url = Thumbnail(src: "photos/cat.jpg").ratio(4, 3).width(300).mode(.fill)
///         .url(base: server, signingKey: key)
///
/// Each step returns a new value; unset parameters are left to the server's defaults.
/// Values are not checked here: the server answers a bad one with a 400 that says why.
public struct Thumbnail: Sendable, Hashable {
    public enum Mode: String, Sendable, CaseIterable {
        case fit, fill, pad, stretch
    }

    public enum Gravity: String, Sendable, CaseIterable {
        case center, north, south, east, west, northeast, northwest, southeast, southwest, smart, entropy, focus
        /// Centred on the faces in the picture (the server falls back to `smart` without any).
        case face
    }

    public enum Shape: String, Sendable, CaseIterable {
        case circle, capsule, rounded
    }

    public enum Format: String, Sendable, CaseIterable {
        /// By `Accept`'s order; `best`: the smallest the client takes at `q=auto`'s floor.
        case auto, best, jpeg, png, webp, avif, jxl, gif
    }

    /// The parameters so far, by name.
    public private(set) var parameters: [String: String]

    /// A thumbnail of `src`, a path relative to the server's image root.
    public init(src: String) { parameters = ["src": src] }

    private func setting(_ name: String, _ value: String) -> Thumbnail {
        var t = self
        t.parameters[name] = value
        return t
    }

    /// The same parameters for another source.
    public func source(_ src: String) -> Thumbnail { setting("src", src) }
    /// The box's width, in points (CSS pixels); `dpr` multiplies it.
    public func width(_ w: Int) -> Thumbnail { setting("w", String(w)) }
    /// The box's height, in points.
    public func height(_ h: Int) -> Thumbnail { setting("h", String(h)) }
    /// The box's aspect ratio, width : height (`ratio(4, 3)`).
    public func ratio(_ width: Double, _ height: Double) -> Thumbnail {
        setting("ratio", "\(Self.number(width)):\(Self.number(height))")
    }
    /// The box's aspect ratio as one number, width / height.
    public func ratio(_ r: Double) -> Thumbnail { setting("ratio", Self.number(r)) }
    public func mode(_ m: Mode) -> Thumbnail { setting("mode", m.rawValue) }
    public func gravity(_ g: Gravity) -> Thumbnail { setting("gravity", g.rawValue) }
    /// `fill` centred on a focal point, each coordinate 0 … 1 of the image.
    public func focus(x: Double, y: Double) -> Thumbnail {
        setting("gravity", Gravity.focus.rawValue).setting("fx", Self.number(x)).setting("fy", Self.number(y))
    }
    public func shape(_ s: Shape) -> Thumbnail { setting("shape", s.rawValue) }
    /// The corner radius of `shape(.rounded)`, in pixels.
    public func radius(_ r: Int) -> Thumbnail { setting("radius", String(r)) }
    /// The colour of `pad` bars and flattened corners: `RRGGBB` or `RRGGBBAA`.
    public func background(_ hex: String) -> Thumbnail { setting("bg", hex) }
    public func format(_ f: Format) -> Thumbnail { setting("format", f.rawValue) }
    public func quality(_ q: Int) -> Thumbnail { setting("q", String(q)) }
    /// `q=auto`: the lowest quality that keeps the picture; the answer's `X-Quality` says which.
    public func autoQuality() -> Thumbnail { setting("q", "auto") }
    /// The screen's scale (2 for a Retina screen): the pixels are the box times this.
    public func dpr(_ d: Double) -> Thumbnail { setting("dpr", Self.number(d)) }
    public func upscale(_ on: Bool) -> Thumbnail { setting("upscale", on ? "1" : "0") }
    /// The region of the upright source to use, each 0 … 1 of its width or height.
    public func crop(x: Double, y: Double, width: Double, height: Double) -> Thumbnail {
        setting("crop", [x, y, width, height].map(Self.number).joined(separator: ","))
    }
    /// Clockwise: 90, 180 or 270.
    public func rotate(_ degrees: Int) -> Thumbnail { setting("rotate", String(degrees)) }
    public enum Flip: String, Sendable, CaseIterable { case h, v, hv }
    public func flip(_ f: Flip) -> Thumbnail { setting("flip", f.rawValue) }
    /// A Gaussian blur of the output, σ 0.3 … 100 (a background behind text, say).
    public func blur(_ sigma: Double) -> Thumbnail { setting("blur", Self.number(sigma)) }
    /// Sharpening of the output, σ 0.3 … 10 (after a large downscale).
    public func sharpen(_ sigma: Double) -> Thumbnail { setting("sharpen", Self.number(sigma)) }
    /// The first frame of an animated source only.
    public func firstFrameOnly() -> Thumbnail { setting("frames", "1") }
    /// The result must fit in this many bytes: the server lowers the quality (not below 10).
    public func maxBytes(_ bytes: Int) -> Thumbnail { setting("maxbytes", String(bytes)) }
    /// Blocks of `size` output pixels (2 … 256).
    public func pixelate(_ size: Int) -> Thumbnail { setting("pixelate", String(size)) }
    /// `wm`: a watermark the server's configuration names.
    public func watermark(_ name: String) -> Thumbnail { setting("wm", name) }
    /// A result smaller than the box as asked is placed on that box, in the background colour.
    public func extend(_ on: Bool = true) -> Thumbnail { setting("extend", on ? "1" : "0") }
    /// A margin around the result, in points (CSS pixels): top, right, bottom, left.
    public func padding(top: Int, right: Int, bottom: Int, left: Int) -> Thumbnail {
        setting("padding", "\(top),\(right),\(bottom),\(left)")
    }
    /// The page (from 1) of a PDF or a multi-page TIFF or HEIF.
    public func page(_ number: Int) -> Thumbnail { setting("page", String(number)) }
    /// The moment of a video to show, in seconds (the server's default: 1 s, or the middle
    /// of a shorter clip).
    public func time(_ seconds: Double) -> Thumbnail { setting("t", Self.number(seconds)) }
    /// A video's hover preview: `count` frames from the moment to the end, as an animation.
    public func preview(frames count: Int) -> Thumbnail { setting("frames", String(count)) }
    /// A preset the server's configuration names (`presets`); parameters set here as well
    /// override the preset's.
    public func preset(_ name: String) -> Thumbnail { setting("preset", name) }

    /// `/thumb?…` (or `/info?…` for `endpoint: "/info"`): the parameters in canonical
    /// order, then `sig` when a key is given, signed over that endpoint's path.
    public func path(signingKey: String? = nil, endpoint: String = "/thumb") -> String {
        let canonical = Signature.canonical(parameters.map { ($0.key, $0.value) })
        guard let signingKey else { return endpoint + "?" + canonical }
        return endpoint + "?" + canonical + "&sig=" + Signature.sign(endpoint + "?" + canonical, key: signingKey)
    }

    /// The thumbnail's URL on the server at `base` (scheme, host, port, and a path prefix
    /// if the server sits behind one).
    public func url(base: URL, signingKey: String? = nil) -> URL? {
        Self.join(base, path(signingKey: signingKey))
    }

    /// The `/info` URL for the same parameters: the source's size, ratio and placeholders,
    /// and the `output` this thumbnail would have; with `faces`, the faces found too
    /// (they come anyway for `gravity(.face)`).
    public func infoURL(base: URL, signingKey: String? = nil, faces: Bool = false) -> URL? {
        Self.join(base, (faces ? setting("faces", "1") : self).path(signingKey: signingKey, endpoint: "/info"))
    }

    static func join(_ base: URL, _ path: String) -> URL? {
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return URL(string: text + path)
    }

    /// A decimal without a trailing `.0` (`2`, `1.5`), as the server reads numbers.
    static func number(_ x: Double) -> String {
        if x == x.rounded(), abs(x) < 1e15 { return String(Int(x)) }
        return String(x)
    }
}
