/// How the image meets the box.
public enum Mode: String, Sendable, CaseIterable, Codable {
    /// The whole image inside the box; one side touches it.
    case fit
    /// Exactly the box, the image covering it and the overflow cropped.
    case fill
    /// Exactly the box, the whole image inside it and the rest `bg`.
    case pad
    /// Exactly the box, each axis scaled on its own: the only mode that distorts.
    case stretch
}

/// Which part `fill` keeps, and where `pad` places the image.
public enum Gravity: String, Sendable, CaseIterable, Codable {
    case center, north, south, east, west, northeast, northwest, southeast, southwest
    /// libvips' attention strategy (`fill` only).
    case smart
    /// libvips' entropy strategy (`fill` only).
    case entropy
    /// Centred on the focal point `fx`, `fy` as far as the edges allow (`fill` only).
    case focus
    /// Centred on the faces in the picture; with none, `smart` (`fill` only; SPEC: Faces).
    case face

    /// The compass gravities: those that place by edges alone.
    public var isCompass: Bool {
        switch self {
        case .smart, .entropy, .focus, .face: false
        default: true
        }
    }

    /// Where along each axis, 0 (left/top) … 1 (right/bottom), a compass gravity places.
    public var anchor: (x: Double, y: Double) {
        switch self {
        case .north: (0.5, 0)
        case .south: (0.5, 1)
        case .east: (1, 0.5)
        case .west: (0, 0.5)
        case .northeast: (1, 0)
        case .northwest: (0, 0)
        case .southeast: (1, 1)
        case .southwest: (0, 1)
        case .center, .smart, .entropy, .focus, .face: (0.5, 0.5)
        }
    }
}

/// A clip shape, as SwiftUI's `clipShape` would apply it.
public enum Shape: String, Sendable, CaseIterable, Codable {
    case circle, capsule, rounded
}

/// What the client asked for as the output format.
public enum FormatChoice: String, Sendable, CaseIterable {
    case auto, jpeg, png, webp, avif, jxl, gif
    /// The smallest of the formats the client takes at `q=auto`'s quality (SPEC: Efficiency).
    case best
    /// A preview as a video: H.264 in MP4, VP9 in WebM (SPEC: Video).
    case mp4, webm
    /// Written when asked for (SPEC: `tiff` is never chosen by `auto`).
    case tiff
    /// A dialect's URL without a format: the source's own, as that dialect keeps it (not a
    /// native value: `/thumb` refuses it).
    case source

    /// The values `/thumb`'s `format` takes.
    public static let native: [FormatChoice] = [
        .auto, .best, .jpeg, .png, .webp, .avif, .jxl, .gif, .tiff, .mp4, .webm,
    ]

    /// Whether the answer's format depends on `Accept` (`Vary: Accept`).
    public var variesWithAccept: Bool { self == .auto || self == .best }
}

/// A concrete output format.
public enum ImageFormat: String, Sendable, CaseIterable, Codable {
    case jpeg, png, webp, avif, jxl, gif
    /// Lossless (deflate), only when asked for by name.
    case tiff
    /// A preview as a video (only of a moving source).
    case mp4, webm

    public var hasAlpha: Bool { self != .jpeg && !isVideo }

    public var isVideo: Bool { self == .mp4 || self == .webm }

    public var mimeType: String { (isVideo ? "video/" : "image/") + rawValue }

    /// The encoder quality used when the request names none (PNG is lossless).
    public var defaultQuality: Int? {
        switch self {
        case .jpeg, .webp: 80
        case .avif: 50
        case .jxl: 75
        case .png, .gif, .tiff, .mp4, .webm: nil
        }
    }

    /// The usual file extension: `jpg` for JPEG, else the name.
    public var fileExtension: String { self == .jpeg ? "jpg" : rawValue }

    /// The format for a file extension (`jpg`, `jpeg`, `png`, `webp`, `avif`, `jxl`, `gif`, `tif`, `tiff`), any case.
    public init?(fileExtension ext: String) {
        switch ext.lowercased() {
        case "jpg", "jpeg": self = .jpeg
        case "png": self = .png
        case "webp": self = .webp
        case "avif": self = .avif
        case "jxl": self = .jxl
        case "gif": self = .gif
        case "mp4": self = .mp4
        case "webm": self = .webm
        case "tif", "tiff": self = .tiff
        default: return nil
        }
    }
}

/// An sRGB colour with alpha, from `RRGGBB` or `RRGGBBAA`.
public struct Color: Equatable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    public static let white = Color(red: 255, green: 255, blue: 255)
    public static let transparent = Color(red: 0, green: 0, blue: 0, alpha: 0)

    /// Parses 6 or 8 hex digits, any case, no `#`.
    public init?(hex: some StringProtocol) {
        let digits = Array(hex.utf8)
        guard digits.count == 6 || digits.count == 8 else { return nil }
        var bytes: [UInt8] = []
        var i = 0
        while i < digits.count {
            guard let hi = hexDigitValue(digits[i]), let lo = hexDigitValue(digits[i + 1]) else {
                return nil
            }
            bytes.append(hi << 4 | lo)
            i += 2
        }
        self.init(red: bytes[0], green: bytes[1], blue: bytes[2], alpha: bytes.count == 4 ? bytes[3] : 255)
    }

    public var isOpaque: Bool { alpha == 255 }

    /// Lower-case `rrggbb`, or `rrggbbaa` when not opaque.
    public var description: String {
        let parts = isOpaque ? [red, green, blue] : [red, green, blue, alpha]
        return parts.map { b in
            let s = String(b, radix: 16)
            return s.count == 1 ? "0" + s : s
        }.joined()
    }
}

/// A validated `/thumb` request: every parameter of SPEC, typed, in range.
public struct ThumbRequest: Equatable, Sendable {
    /// The source path, relative to the image root, as the client spelled it (decoded).
    public var src: String
    public var width: Int?
    public var height: Int?
    public var ratio: Ratio?
    public var mode: Mode = .fit
    public var gravity: Gravity = .center
    /// The focal point for `gravity=focus`, each 0 … 1.
    public var focusX: Double = 0.5
    public var focusY: Double = 0.5
    public var upscale = false
    public var dpr: Double = 1
    public var shape: Shape?
    /// Corner radius for `shape=rounded`, in CSS pixels; `nil` means 8.
    public var radius: Int?
    public var background: Color?
    public var format: FormatChoice = .auto
    public var quality: Int?
    /// `crop`: the region of the upright source to use, in relative units.
    public var region: Region?
    /// `rotate`: 0, 90, 180 or 270, clockwise, after the region.
    public var rotate = 0
    public var flip: Flip?
    /// `blur`: the σ of a Gaussian blur of the output.
    public var blur: Double?
    /// `sharpen`: the σ of a sharpening of the output.
    public var sharpen: Double?
    /// `frames=1`: the first frame of an animated source only.
    public var firstFrameOnly = false
    /// `trim`: before `crop`, the uniform border cut away.
    public var trim: Trim?
    /// False keeps the stored orientation (a dialect's option: the native API always
    /// applies EXIF orientation).
    public var autoRotate = true
    /// Whether the copyright is kept in the metadata (a dialect's option): nil follows
    /// `output.keepCopyright`.
    public var keepCopyright: Bool?
    /// `extend`: pad a result smaller than the box as asked out to that box.
    public var extend = false
    /// `/info`'s `faces=1`: the faces found in the picture (SPEC: Faces).
    public var faces = false
    /// `padding`: a `bg` margin around the result, in CSS pixels.
    public var padding: Insets?
    /// `pixelate`: blocks of this many output pixels.
    public var pixelate: Int?
    /// `wm`: the name of a configured watermark to overlay.
    public var watermark: String?
    /// A geometry the native parameters cannot say (a URL dialect's): planned by its own
    /// rules once the source is known, in place of `w`, `h`, `ratio`, `mode`, ….
    public var planner: Planner?
    /// The result in shades of grey (a dialect's option).
    public var grayscale = false
    /// `raw` (a dialect's option): the source's bytes, unprocessed (its type and limits
    /// checked as for any source).
    public var raw = false
    /// `passthrough`: sources of these formats (loader
    /// names), asked in their own format, are answered with their bytes unprocessed.
    public var passthrough: [String] = []
    /// `profile=keep`: the source's ICC profile kept in
    /// the result, its pixels not converted to sRGB.
    public var keepProfile = false
    /// `thumbnail=embedded`: a HEIF/AVIF source's embedded
    /// thumbnail decoded in place of the picture, when it has one (sizes planned on it).
    public var embeddedThumbnail = false
    /// The source's format, once its header is read (not part of the canonical form).
    public var sourceFormat: String?

    /// The formats `passthrough` may name: the raster formats whose bytes a browser shows
    /// as they are (an SVG is drawn, never passed on as markup).
    public static let passthroughFormats: Set<String> = ["jpeg", "png", "gif", "webp", "avif", "heif", "tiff", "jxl"]

    /// Whether the answer is the source's own bytes: `raw`, or a `passthrough` format
    /// asked in that format (or with none named).
    public func answersSource(format source: String) -> Bool {
        guard source != "svg" else { return false }
        if raw { return true }
        guard passthrough.contains(source) else { return false }
        return format.variesWithAccept || format == .source || format.rawValue == source
    }

    /// Whether the request must see the source's header before it has a key: a planner's
    /// geometry, the source's own format kept, or an answer that may be the source's bytes.
    public var needsSource: Bool { format == .source || planner != nil || raw || !passthrough.isEmpty }

    /// What every request that needs the source settles by its header: the source's format,
    /// where the answer may be its bytes.
    public mutating func note(_ source: SourceDescription) {
        if raw || !passthrough.isEmpty { sourceFormat = source.format }
    }

    /// What ends every dialect's settling on a source: `format=source` resolved by the
    /// dialect's rule `kept` (told this request and whether the result moves: an animation
    /// kept, or a video's preview), and the source noted.
    public func settled(
        on source: SourceDescription, keeping kept: (_ request: ThumbRequest, _ animated: Bool) -> ImageFormat
    ) -> ThumbRequest {
        var r = self
        if format == .source {
            let moving = source.frames > 1 && !firstFrameOnly || (frameCount ?? 1) > 1
            r.format = FormatChoice(rawValue: kept(self, moving).rawValue) ?? .jpeg
        }
        r.note(source)
        return r
    }

    /// `q=auto`: the lowest quality that keeps the picture (SPEC: Efficiency).
    public var autoQuality = false
    /// The quality by output format, where `q` is not given (a dialect's option).
    public var formatQuality: [String: Int] = [:]
    /// `maxbytes`: the most bytes the result may have; the quality is lowered to fit.
    public var maxBytes: Int?
    /// Not a parameter: the client sent `Save-Data: on` without `q`, and the server
    /// honours it (`http.saveData`). Part of the canonical form, so of the key.
    public var saveData = false
    /// `page`: the page of a PDF or a multi-page TIFF or HEIF, from 1.
    public var page = 1
    /// `t`: the moment of a video to show, in seconds; nil for the default.
    public var time: Double?
    /// `frames=N` with N ≥ 2: a video's preview of N frames.
    public var frameCount: Int?
    /// `tiles=COLSxROWS`: a video's storyboard, `every` seconds apart, sheet `sheet`.
    public var tiles: Grid?
    public var every: Double?
    public var sheet = 0
    /// The `sig` parameter, checked by the server against the raw query.
    public var signature: String?

    public init(src: String) { self.src = src }

    /// The largest `page` parsed; a source decides where its own last page is.
    public static let maxPage = 100_000
    /// The largest `t` parsed (about 11 days); a video decides where its own end is.
    public static let maxSeconds: Double = 1_000_000

    /// Default corner radius in CSS pixels.
    public static let defaultRadius = 8
}

/// A region of an image in relative units, 0 … 1 of its width and height.
public struct Region: Equatable, Hashable, Sendable {
    public var x: Double, y: Double, width: Double, height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The region in pixels of an image of `size`: edges rounded, at least 1×1, inside it.
    public func pixels(of size: Size) -> Rect {
        func edge(_ v: Double, _ n: Int) -> Int {
            min(n, max(0, Rounding.int((v * Double(n)).rounded(.toNearestOrAwayFromZero))))
        }
        let x0 = edge(x, size.width)
        let y0 = edge(y, size.height)
        let w = max(1, edge(x + width, size.width) - x0)
        let h = max(1, edge(y + height, size.height) - y0)
        return Rect(x: min(x0, size.width - w), y: min(y0, size.height - h), width: w, height: h)
    }
}

/// `flip`: mirror horizontally, vertically, or both.
public enum Flip: String, Sendable, CaseIterable, Codable {
    case h, v, hv
}
