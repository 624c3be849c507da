import Core
import Foundation

/// A thumbor URL read into Aspect's request (SPEC: thumbor URLs): the path's parts into
/// `ThumborGeometry`, its filters into the geometry or the native fields that mean the
/// same (`quality`, `format`, `blur`, `max_bytes`, `grayscale`), the
/// image into a path under the root. A filter Aspect does not answer is a 400 naming it
/// (thumbor skips it).
public struct ThumborURL: Sendable {
    public var path: ThumborPath
    public var request: ThumbRequest

    public struct Settings: Sendable {
        public var root: SourceRoot
        /// The configured watermarks' names: the only ones `watermark()` may name.
        public var watermarks: Set<String>

        public init(root: SourceRoot, watermarks: Set<String> = []) {
            self.root = root
            self.watermarks = watermarks
        }
    }

    /// thumbor's `MAX_LEVEL` of URLs inside URLs `extract_focal()` looks through.
    static let maxNesting = 10

    public static func parse(_ rawPath: Substring, settings: Settings, limits: RequestLimits) throws(AspectError)
        -> ThumborURL
    {
        let path = try ThumborPath.parse(rawPath)
        var g = ThumborGeometry()
        g.crop = path.crop
        g.fitIn = path.fitIn
        (g.width, g.height) = (path.width, path.height)
        (g.flipHorizontally, g.flipVertically) = (path.flipHorizontally, path.flipVertically)
        g.halign = path.halign ?? .center
        g.valign = path.valign ?? .middle
        g.smart = path.smart
        var r = ThumbRequest(src: "")
        r.format = .source
        var image = path.image
        for f in path.filters {
            try apply(f, to: &g, &r, image: &image, settings: settings)
        }
        if let t = path.trim {
            // thumbor's tolerance is a distance in RGB (0 … 442); libvips' threshold is per
            // channel: the distance of an equal step in all three.
            r.trim = Trim(threshold: Double(t.tolerance) / 3.0.squareRoot(), bottomRight: t.corner == .bottomRight)
        }
        guard let decoded = try? PercentEncoding.decode(image) else {
            throw AspectError(.badParam, "the image \(quoted(String(image))) is not valid percent-encoding")
        }
        r.src = try settings.root.relativePath(of: decoded)
        try ThumbRequest.checkSourcePath(r.src)
        r.thumbor = g
        return ThumborURL(path: path, request: r)
    }

    static func bad(_ f: ThumborPath.Filter, _ why: String) -> AspectError {
        AspectError(.badParam, "filters: \(f.name)(\(f.arguments.joined(separator: ","))) \(why)")
    }

    static func count(_ f: ThumborPath.Filter, _ range: ClosedRange<Int>) throws(AspectError) {
        guard range.contains(f.arguments.count) else {
            throw bad(
                f,
                range.lowerBound == range.upperBound
                    ? "takes \(range.lowerBound) argument(s)"
                    : "takes \(range.lowerBound) to \(range.upperBound) arguments")
        }
    }

    static func integer(_ f: ThumborPath.Filter, _ i: Int, _ range: ClosedRange<Int>) throws(AspectError) -> Int {
        let text = f.arguments[i].trimmingCharacters(in: .whitespaces)
        guard let n = Int(text), range.contains(n) else {
            throw bad(f, "takes a whole number from \(range.lowerBound) to \(range.upperBound), got \(quoted(text))")
        }
        return n
    }

    static func decimal(_ f: ThumborPath.Filter, _ i: Int) throws(AspectError) -> Double {
        let text = f.arguments[i].trimmingCharacters(in: .whitespaces)
        guard let x = Double(text), x.isFinite else { throw bad(f, "takes a number, got \(quoted(text))") }
        return x
    }

    /// thumbor's `Boolean` argument: `1`, `true`, `yes` or `on` (any case); else false.
    static func flag(_ f: ThumborPath.Filter, _ i: Int) -> Bool {
        guard i < f.arguments.count else { return false }
        return ["1", "true", "yes", "on"].contains(f.arguments[i].trimmingCharacters(in: .whitespaces).lowercased())
    }

    /// One filter, into the geometry, the request or (`extract_focal()`) the image; each
    /// filter of more than a line has its own function below.
    static func apply(
        _ f: ThumborPath.Filter, to g: inout ThumborGeometry, _ r: inout ThumbRequest, image: inout Substring,
        settings: Settings
    ) throws(AspectError) {
        switch f.name {
        case "quality":
            try count(f, 1...1)
            r.quality = max(1, try integer(f, 0, 0...100))
        case "format": try applyFormat(f, &r)
        case "blur": try applyBlur(f, &r)
        case "grayscale":
            try count(f, 0...0)
            r.grayscale = true
        case "strip_icc", "strip_exif":
            // Aspect writes neither an ICC profile (the result is sRGB) nor EXIF.
            try count(f, 0...0)
        case "max_bytes":
            try count(f, 1...1)
            r.maxBytes = try integer(f, 0, 1...Int(Int32.max))
        case "no_upscale":
            try count(f, 0...0)
            g.noUpscale = true
        case "upscale":
            try count(f, 0...0)
            g.steps.append(.upscale)
        case "proportion": try applyProportion(f, &g)
        case "rotate": try applyRotate(f, &g)
        case "fill": try applyFill(f, &g)
        case "background_color":
            try count(f, 1...1)
            g.backgroundColor = try color(f, f.arguments[0])
        case "round_corner": try applyRoundCorner(f, &g)
        case "focal": try applyFocal(f, &g)
        case "extract_focal": try applyExtractFocal(f, &g, image: &image)
        case "watermark": try watermark(f, &g, settings)
        default:
            throw AspectError(
                .badParam,
                "filters: \(f.name) is not answered here; see the thumbor URLs section of the API docs for those that are"
            )
        }
    }

    /// `format(name)`: the formats Aspect writes, by thumbor's names.
    private static func applyFormat(_ f: ThumborPath.Filter, _ r: inout ThumbRequest) throws(AspectError) {
        try count(f, 1...1)
        let name = f.arguments[0].lowercased()
        switch name {
        case "jpeg", "jpg": r.format = .jpeg
        case "png": r.format = .png
        case "webp": r.format = .webp
        case "gif": r.format = .gif
        case "avif": r.format = .avif
        case "tiff", "tif": r.format = .tiff
        case "heic", "heif": throw bad(f, "is not written here; ask for webp, avif, jpeg, png, gif or tiff")
        default: throw bad(f, "names no format; give webp, avif, jpeg, png, gif or tiff")
        }
    }

    /// `blur(radius[,sigma])`, as the sigma libvips blurs by (`blurSigma`).
    private static func applyBlur(_ f: ThumborPath.Filter, _ r: inout ThumbRequest) throws(AspectError) {
        try count(f, 1...2)
        // thumbor 7.8 answers blur(0) unblurred (its filter skips a radius of 0).
        let radius = try integer(f, 0, 0...150)
        let sigma = f.arguments.count == 2 ? try decimal(f, 1) : 0
        guard sigma >= 0, sigma <= 1000 else { throw bad(f, "takes a sigma from 0 to 1000") }
        if radius > 0 { r.blur = blurSigma(radius: radius, sigma: sigma) }
    }

    /// `proportion(v)`: a step scaling the image by a fraction.
    private static func applyProportion(_ f: ThumborPath.Filter, _ g: inout ThumborGeometry) throws(AspectError) {
        try count(f, 1...1)
        let v = try decimal(f, 0)
        guard v > 0, v <= 1 else { throw bad(f, "takes a fraction above 0 and at most 1") }
        g.steps.append(.proportion(v))
    }

    /// `rotate(n)`: a step turning by a multiple of 90, kept under a full turn.
    private static func applyRotate(_ f: ThumborPath.Filter, _ g: inout ThumborGeometry) throws(AspectError) {
        try count(f, 1...1)
        let n = try integer(f, 0, -3600...3600)
        // thumbor 7.8 turns by multiples of 90 only, and answers any other angle
        // (rotate(45)) with the picture unturned.
        if n % 90 == 0, n % 360 != 0 { g.steps.append(.rotate(((n % 360) + 360) % 360)) }
    }

    /// `fill(colour|blur|auto[,fill_transparent])`: a step putting the image on a canvas.
    private static func applyFill(_ f: ThumborPath.Filter, _ g: inout ThumborGeometry) throws(AspectError) {
        try count(f, 1...2)
        guard g.cornerRadius == nil else { throw bad(f, "comes after round_corner here; put fill first") }
        let fill: ThumborGeometry.Fill
        switch f.arguments[0].lowercased() {
        case "blur": fill = .blur
        case "auto": fill = .auto
        default: fill = .color(try color(f, f.arguments[0]))
        }
        g.steps.append(.fill(fill))
        // fill_transparent: the picture's own transparent pixels take the colour too.
        if flag(f, 1) { g.fillTransparent = true }
    }

    /// `round_corner(a|b,r,g,b[,transparent])`: one radius, the corners' colour or none.
    private static func applyRoundCorner(_ f: ThumborPath.Filter, _ g: inout ThumborGeometry) throws(AspectError) {
        try count(f, 4...5)
        let radii = f.arguments[0].split(separator: "|", omittingEmptySubsequences: false)
        guard radii.count <= 2, let a = Int(radii[0]), a >= 0, a <= 10000,
            radii.count == 1 || Int(radii[1]) == a
        else { throw bad(f, "takes one radius in pixels (an elliptical a|b corner is not drawn here)") }
        let rgb = [try integer(f, 1, 0...255), try integer(f, 2, 0...255), try integer(f, 3, 0...255)]
        g.cornerRadius = a
        g.cornerColor =
            flag(f, 4) ? nil : Color(red: UInt8(rgb[0]), green: UInt8(rgb[1]), blue: UInt8(rgb[2]))
    }

    /// `focal(LxT:RxB)`: a focal point, the rectangle's centre weighted by its area.
    private static func applyFocal(_ f: ThumborPath.Filter, _ g: inout ThumborGeometry) throws(AspectError) {
        try count(f, 1...1)
        var probe = ThumborPath(signature: .unsafe, signedPath: "", image: "")
        guard probe.readCrop(Substring(f.arguments[0])), let c = probe.crop else {
            throw bad(f, "takes LEFTxTOP:RIGHTxBOTTOM in the source's pixels")
        }
        if c.right > c.left, c.bottom > c.top { g.focalPoints.append(.init(square: c)) }
    }

    /// `extract_focal()`: the focal point and the image from a thumbor URL inside the image
    /// part (`extractFocal`); else nothing.
    private static func applyExtractFocal(
        _ f: ThumborPath.Filter, _ g: inout ThumborGeometry, image: inout Substring
    ) throws(AspectError) {
        try count(f, 0...0)
        if let (inner, crop) = extractFocal(image) {
            // As focal(): a crop with no area is no point (its weight would be 0).
            if crop.right > crop.left, crop.bottom > crop.top { g.focalPoints.append(.init(square: crop)) }
            image = inner
        }
    }

    /// thumbor's blur is a kernel `radius` wide with the given sigma (the radius when 0):
    /// a Gaussian cut at that radius. libvips' is cut where it fades out, so the same sigma
    /// blurs a little more; close enough for the picture, said in the docs.
    static func blurSigma(radius: Int, sigma: Double) -> Double {
        let s = sigma == 0 ? Double(radius) : sigma
        // Cut at one sigma, thumbor's blur(N) spreads about as far as a Gaussian of half of it.
        return max(0.3, min(s, Double(radius)) * (sigma == 0 ? 0.5 : 1))
    }

    /// `watermark(name,x,y,alpha[,w_ratio[,h_ratio]])`: only a configured watermark's name.
    static func watermark(_ f: ThumborPath.Filter, _ g: inout ThumborGeometry, _ settings: Settings)
        throws(AspectError)
    {
        try count(f, 4...6)
        let name = f.arguments[0]
        guard settings.watermarks.contains(name) else {
            throw bad(
                f,
                "names no configured watermark: give a name from watermarks (an image's URL is not fetched here)")
        }
        func position(_ i: Int) throws(AspectError) -> ThumborGeometry.Mark.Position {
            let t = f.arguments[i].trimmingCharacters(in: .whitespaces).lowercased()
            if t == "center" { return .center }
            if t.hasSuffix("p"), let v = Double(t.dropLast()), abs(v) <= 100 { return .percent(v) }
            guard let n = Int(t), (-100_000...100_000).contains(n) else {
                throw bad(f, "takes x and y as pixels, Np (a percent) or center; got \(quoted(t))")
            }
            return .pixels(n)
        }
        func ratio(_ i: Int) throws(AspectError) -> Double? {
            guard i < f.arguments.count else { return nil }
            let t = f.arguments[i].trimmingCharacters(in: .whitespaces).lowercased()
            if t == "none" { return nil }
            guard let v = Double(t), v > 0, v <= 100 else { throw bad(f, "takes ratios from 1 to 100 or none") }
            return v
        }
        g.watermark = ThumborGeometry.Mark(
            name: name, x: try position(1), y: try position(2), alpha: try integer(f, 3, 0...100),
            widthRatio: try ratio(4), heightRatio: try ratio(5))
    }

    /// `extract_focal()`: an image part that is itself a thumbor URL with a manual crop
    /// (`host/unsafe/LxT:RxB/…/image`): its crop is the focal point, its image the image.
    static func extractFocal(_ image: Substring) -> (Substring, ThumborPath.Crop)? {
        var url = image
        for _ in 0..<maxNesting {
            // thumbor drops `[http(s)://]host/` first.
            for scheme in ["http://", "https://"] where url.hasPrefix(scheme) { url = url.dropFirst(scheme.count) }
            guard let slash = url.firstIndex(of: "/") else { return nil }
            url = url[slash...]
            guard let inner = try? ThumborPath.parse(url) else { return nil }
            if let c = inner.crop { return (inner.image, c) }
            url = inner.image
        }
        return nil
    }

    /// A colour as thumbor's filters take it: hex without `#` (3, 6 or 8 digits), a CSS
    /// name (all 148), or `transparent`.
    static func color(_ f: ThumborPath.Filter, _ text: String) throws(AspectError) -> Color {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        if t == "transparent" { return .transparent }
        if let c = NamedColors.all[t] { return c }
        let hex = t.hasPrefix("#") ? String(t.dropFirst()) : t
        let long = hex.count == 3 ? hex.map { "\($0)\($0)" }.joined() : hex
        guard long.count == 6 || long.count == 8, let c = Color(hex: long) else {
            throw bad(f, "takes a colour: hex (ff0000), a CSS name (red) or transparent; got \(quoted(text))")
        }
        return c
    }
}
