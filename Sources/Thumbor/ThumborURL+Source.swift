import Core

/// What a thumbor URL's request settles once the source's header is read (SPEC: thumbor
/// URLs): the format it keeps when it names none, and the native request where the
/// native plan on this source is thumbor's.
extension ThumborURL {
    public static func settle(_ request: ThumbRequest, source: SourceDescription, limits: RequestLimits)
        -> ThumbRequest
    {
        var r = request
        if r.trim == nil, let g = r.thumbor, let native = nativeRequest(g, r, source: source, limits: limits) {
            r = native
        }
        return r.settled(on: source) { keptFormat(source, request: $0, animated: $1) }
    }

    /// thumbor's engine writes the source's own format when the URL names none: JPEG, PNG,
    /// GIF, WebP and AVIF are kept; any other is PNG when it has alpha, else JPEG.
    public static func keptFormat(_ source: SourceDescription, request r: ThumbRequest, animated: Bool)
        -> ImageFormat
    {
        let kept: [String: ImageFormat] = ["jpeg": .jpeg, "png": .png, "gif": .gif, "webp": .webp, "avif": .avif]
        if let format = kept[source.format] { return format }
        return animated ? .gif : source.hasAlpha && r.background == nil ? .png : .jpeg
    }

    /// The native request that plans as thumbor does on this source, or nil: `WxH` as a
    /// fill that enlarges (by the alignment's gravity), a lone side as a fit that
    /// enlarges, `fit-in` as a fit; flips as `flip`. Held to thumbor's own plan: the same
    /// sizes, positions within a pixel.
    static func nativeRequest(_ g: ThumborGeometry, _ r: ThumbRequest, source: SourceDescription, limits: RequestLimits)
        -> ThumbRequest?
    {
        guard g.crop == nil, g.focalPoints.isEmpty, g.steps.isEmpty, g.cornerRadius == nil, g.watermark == nil,
            g.backgroundColor == nil, r.maxBytes == nil,
            !g.smart, !source.isVector, source.size.width > 0, source.size.height > 0
        else { return nil }
        func pixels(_ s: ThumborPath.Side, own: Int) -> Int? {
            switch s {
            case .free: nil
            case .orig: own
            case .pixels(let n): n
            }
        }
        var w = pixels(g.width, own: source.size.width)
        var h = pixels(g.height, own: source.size.height)
        if g.noUpscale {
            w = w.map { min($0, source.size.width) }
            h = h.map { min($0, source.size.height) }
        }
        var n = r
        n.thumbor = nil
        n.ratio = nil
        (n.width, n.height) = (w, h)
        n.flip =
            g.flipHorizontally && g.flipVertically
            ? .hv : g.flipHorizontally ? .h : g.flipVertically ? .v : nil
        switch g.fitIn {
        case nil:
            n.upscale = true
            if w != nil, h != nil {
                n.mode = .fill
                let compass: [String: Gravity] = [
                    "center middle": .center, "left middle": .west, "right middle": .east, "center top": .north,
                    "center bottom": .south, "left top": .northwest, "right top": .northeast,
                    "left bottom": .southwest, "right bottom": .southeast,
                ]
                n.gravity = compass["\(g.halign.rawValue) \(g.valign.rawValue)"] ?? .center
            } else {
                n.mode = .fit
            }
        case .fitIn?:
            guard w != nil || h != nil else { return nil }
            n.mode = .fit
            n.upscale = false
        default:
            return nil
        }
        guard let theirs = try? g.plan(source: source.thumbor, request: r, limits: limits),
            let ours = try? Geometry.plan(source: source.size, request: n, limits: limits),
            theirs.isSameResult(as: ours) || sameCut(theirs, ours)
        else { return nil }
        return n
    }

    /// thumbor crops the source to the target's shape, then resizes; the native `fill`
    /// resizes, then crops (after a flip, from the other side). The same picture, unturned and unflipped, when the sizes agree and the part of the
    /// source each keeps is the same within a pixel of the resized picture.
    static func sameCut(_ t: Plan, _ n: Plan) -> Bool {
        guard t.output == n.output, t.rotate == 0, n.rotate == 0, t.flip == nil, n.flip == nil, t.extended == nil,
            n.extended == nil,
            t.padding == nil, n.padding == nil, t.crop == nil, n.scaleX > 0, n.scaleY > 0
        else { return false }
        let kept = t.region ?? Rect(x: 0, y: 0, width: t.upright.width, height: t.upright.height)
        let window = n.crop ?? Rect(x: 0, y: 0, width: n.resized.width, height: n.resized.height)
        // The native window in the source's pixels, and a pixel of the result in them.
        let (sx, sy) = (1 / n.scaleX, 1 / n.scaleY)
        let edges = [
            (Double(kept.x), Double(window.x) * sx, sx), (Double(kept.y), Double(window.y) * sy, sy),
            (Double(kept.x + kept.width), Double(window.x + window.width) * sx, sx),
            (Double(kept.y + kept.height), Double(window.y + window.height) * sy, sy),
        ]
        return edges.allSatisfy { abs($0.0 - $0.1) <= $0.2 + 1 }
    }
}
