import Core

/// What an imgproxy URL's request can only settle once the source's header is read
/// (SPEC: imgproxy URLs): the format it keeps when it names none, and whether the native
/// parameters say its geometry on this source, so that it shares the native request's
/// cache entry and ETag.
extension ImgproxyURL {
    /// `request` with the source's format kept (when it names none) and its geometry said
    /// natively where the native plan on this source is imgproxy's.
    public static func settle(_ request: ThumbRequest, source: SourceDescription, limits: RequestLimits)
        -> ThumbRequest
    {
        var r = request
        if let g = r.imgproxy {
            if r.trim == nil, let native = nativeRequest(g, r, source: source, limits: limits) {
                r = native
            } else if r.trim != nil, let native = sameOnAnySource(g, r, limits: limits) {
                // A trimmed source's size is known only after the trim: only a geometry
                // that means the same on any source is said natively.
                r = native
            }
        }
        return r.settled(on: source) { keptFormat(source, request: $0, animated: $1) }
    }

    /// imgproxy's output format for a URL that names none (`determineOutputFormat` with its
    /// default `IMGPROXY_PREFERRED_FORMATS` of JPEG, PNG and GIF): the source's own when it
    /// is one of those; else GIF for an animation, PNG when the result may be transparent
    /// (the source has alpha, or padding or `extend` add a border with no background),
    /// else JPEG.
    public static func keptFormat(_ source: SourceDescription, request r: ThumbRequest, animated: Bool)
        -> ImageFormat
    {
        switch source.format {
        case "jpeg": return .jpeg
        case "png": return .png
        case "gif": return .gif
        default: break
        }
        if animated { return .gif }
        let g = r.imgproxy
        let borders =
            r.padding != nil || r.extend
            || g.map { $0.extend || $0.extendAspectRatio || $0.padding != [0, 0, 0, 0] }
                == true
        return r.background == nil && (source.hasAlpha || borders) ? .png : .jpeg
    }

    /// The native request that plans as imgproxy does on this source, or nil. Built from
    /// the geometry as the native parameters would say it, then held to imgproxy's own
    /// plan on the source: the same sizes everywhere, positions within a pixel.
    static func nativeRequest(
        _ g: ImgproxyGeometry, _ r: ThumbRequest, source: SourceDescription, limits: RequestLimits
    )
        -> ThumbRequest?
    {
        guard source.size.width > 0, source.size.height > 0,
            let n = candidate(g, r, source: source.size, limits: limits)
        else { return nil }
        var asNative = n
        if source.isVector { asNative.upscale = true }
        guard let theirs = try? g.plan(source: source.size, request: r, isVector: source.isVector, limits: limits),
            let ours = try? Geometry.plan(source: source.size, request: asNative, limits: limits),
            theirs.isSameResult(as: ours)
        else { return nil }
        return n
    }

    /// The native request for a geometry that plans as imgproxy's on any source: `fit`,
    /// `fill` with `enlarge`, or `fill-down`, with nothing but a gravity, `dpr`, `rotate`
    /// and `flip` (no crop, padding or extend, whose sizes depend on the source).
    static func sameOnAnySource(_ g: ImgproxyGeometry, _ r: ThumbRequest, limits: RequestLimits) -> ThumbRequest? {
        let both = g.width > 0 && g.height > 0
        guard g.resize == .fit || g.resize == .fillDown || (g.resize == .fill && (g.enlarge || !both)),
            g.cropWidth == 0, g.cropHeight == 0, !g.extend, g.padding == [0, 0, 0, 0]
        else { return nil }
        return candidate(g, r, source: nil, limits: limits)
    }

    /// The native parameters as they would say `g` (on a source of `source` pixels, which
    /// `auto` and a crop in pixels need), not yet held to imgproxy's plan.
    static func candidate(_ g: ImgproxyGeometry, _ r: ThumbRequest, source: Size?, limits: RequestLimits)
        -> ThumbRequest?
    {
        guard g.minWidth == 0, g.minHeight == 0, g.zoomWidth == 1, g.zoomHeight == 1, g.watermark == nil,
            !g.extendAspectRatio, g.width <= limits.maxDimension, g.height <= limits.maxDimension, g.dpr >= 1,
            g.dpr <= limits.maxDpr
        else { return nil }
        let both = g.width > 0 && g.height > 0
        var resize = g.resize
        if resize == .auto {
            // imgproxy's `auto`: fill when the source (as rotated) and the box lean the
            // same way, else fit.
            guard let size = source else { return nil }
            let turned = g.rotate % 180 == 90 ? Size(width: size.height, height: size.width) : size
            let (srcD, dstD) = (turned.width - turned.height, g.width - g.height)
            resize = (srcD >= 0 && dstD >= 0) || (srcD < 0 && dstD < 0) ? .fill : .fit
        }
        var n = r
        n.imgproxy = nil
        n.width = g.width > 0 ? g.width : nil
        n.height = g.height > 0 ? g.height : nil
        n.ratio = nil
        n.upscale = g.enlarge
        n.dpr = g.dpr
        n.rotate = g.rotate
        n.flip = g.flip
        switch resize {
        case .fit: n.mode = .fit
        case .fill, .fillDown: n.mode = both ? .fill : .fit
        case .force: n.mode = both ? .stretch : .fit
        case .auto: return nil
        }
        // `extend` pads out to the box, placed by the native `gravity`; with fill the two
        // gravities must agree.
        if g.extend {
            guard both, let placed = nativeGravity(g.extendGravity) else { return nil }
            if n.mode == .fill, nativeGravity(g.gravity)?.gravity != placed.gravity { return nil }
            n.extend = true
            n.gravity = placed.gravity
        }
        if n.mode == .fill {
            guard let fill = nativeGravity(g.gravity) else { return nil }
            (n.gravity, n.focusX, n.focusY) = (fill.gravity, fill.x, fill.y)
        } else if !g.extend {
            (n.gravity, n.focusX, n.focusY) = (.center, 0.5, 0.5)
        }
        if g.padding != [0, 0, 0, 0] {
            n.padding = Insets(top: g.padding[0], right: g.padding[1], bottom: g.padding[2], left: g.padding[3])
        }
        if g.cropWidth > 0 || g.cropHeight > 0 {
            guard g.rotate == 0, g.flip == nil, let size = source, let region = nativeRegion(g, size) else {
                return nil
            }
            n.region = region
        }
        return n
    }

    /// A gravity the native parameters can say: a compass point without offsets, `sm`, or
    /// a focus point.
    static func nativeGravity(_ g: ImgproxyGravity) -> (gravity: Gravity, x: Double, y: Double)? {
        switch g.kind {
        case .sm: return (.smart, 0.5, 0.5)
        case .obj: return (.face, 0.5, 0.5)
        case .fp: return (.focus, g.x, g.y)
        default:
            guard g.x == 0, g.y == 0 else { return nil }
            let compass: [ImgproxyGravity.Kind: Gravity] = [
                .ce: .center, .no: .north, .so: .south, .ea: .east, .we: .west, .noea: .northeast,
                .nowe: .northwest, .soea: .southeast, .sowe: .southwest,
            ]
            return compass[g.kind].map { ($0, 0.5, 0.5) }
        }
    }

    /// `crop:w:h:gravity` as the native relative `crop`: fractions of the source as given,
    /// at the compass point's anchor (0, ½ or 1 of the room left); pixel sizes as fractions
    /// of this source.
    static func nativeRegion(_ g: ImgproxyGeometry, _ source: Size) -> Region? {
        let gravity = g.cropGravity ?? g.gravity
        guard !gravity.kind.isFound, gravity.kind != .fp, gravity.x == 0, gravity.y == 0,
            let anchor = nativeGravity(gravity)?.gravity.anchor
        else { return nil }
        func side(_ crop: Double, _ n: Int) -> Double {
            crop == 0 || crop >= Double(n) ? 1 : crop >= 1 ? (crop.rounded(.towardZero)) / Double(n) : crop
        }
        let (w, h) = (side(g.cropWidth, source.width), side(g.cropHeight, source.height))
        func at(_ a: Double, _ size: Double) -> Double { a == 0 ? 0 : a == 1 ? 1 - size : (1 - size) / 2 }
        return Region(x: at(anchor.x, w), y: at(anchor.y, h), width: w, height: h)
    }
}
