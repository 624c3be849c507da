import Core
import Foundation

/// Where the source stands before a thumbor plan: its upright size (trimmed when `trim`
/// cut it), and what the trim cut.
public struct ThumborSource: Sendable {
    public var size: Size
    /// The part of the upright source the trim kept; nil: not trimmed.
    public var trim: Rect?
    /// The upright source before the trim (`no_upscale` caps by it, as thumbor's runs
    /// before the trim).
    public var untrimmed: Size

    public init(size: Size, trim: Rect? = nil, untrimmed: Size? = nil) {
        self.size = size
        self.trim = trim
        self.untrimmed = untrimmed ?? size
    }
}

extension ThumborGeometry {
    /// Python's `round()` of a float: half to even.
    static func pyRound(_ x: Double) -> Double { x.rounded(.toNearestOrEven) }

    /// Python's `int()` of a float, kept at least 1 (thumbor's "avoiding 0px images").
    static func pixels(_ x: Double) -> Int { max(1, Rounding.int(x.rounded(.towardZero))) }

    /// thumbor's transformer on this source (SPEC: thumbor URLs): the manual crop (moved by
    /// what the trim cut), the target sizes, then `fit-in`'s resize or the crop around the
    /// focal points and the resize to the target, the flips, then the filters that move
    /// pixels in the URL's order (`rotate`, `fill`, `proportion`, `upscale`), expressed as
    /// the steps Aspect's renderer takes: the region, the turn and flip that leave the
    /// picture the same way round, the resize, the canvas.
    ///
    /// A result over `limits.maxDimension` is planned again with thumbor's MAX_WIDTH and
    /// MAX_HEIGHT set to it (thumbor's own default is no limit): the source scaled to fit
    /// first (its engine's `normalize`), an asked side capped by it.
    public func plan(source src: ThumborSource, request r: ThumbRequest, limits: RequestLimits)
        throws(AspectError) -> Plan
    {
        guard src.size.width >= 1, src.size.height >= 1 else {
            throw AspectError(.unsupportedSource, "the source reports a size of \(src.size), which is not an image")
        }
        let plan = try planned(src, r, limits, capped: false)
        guard plan.output.width > limits.maxDimension || plan.output.height > limits.maxDimension else { return plan }
        return try planned(src, r, limits, capped: true)
    }

    /// The plan with thumbor's MAX_WIDTH and MAX_HEIGHT unset, or (`capped`) both
    /// `limits.maxDimension`: the steps of `plan(source:request:limits:)` in thumbor's order.
    func planned(_ src: ThumborSource, _ r: ThumbRequest, _ limits: RequestLimits, capped: Bool)
        throws(AspectError) -> Plan
    {
        let most = capped ? limits.maxDimension : Int.max
        let whole = Self.normalized(src.untrimmed, most: most)
        let trim = Self.scaledTrim(src, whole: whole)
        let (askedW, askedH) = askedSides(most: most, whole: whole)
        let (cropped, s) = manualCrop(src, whole: whole, trim: trim)
        let target = Self.target(askedW, askedH, of: s)
        let sized: Sized
        if let fit = fitIn {
            sized = Self.fitInResize(fit, s, target, region: cropped)
        } else {
            sized = cropResize(s, target, region: cropped)
        }
        let stage = try stepped(sized)
        let output = stage.canvas?.size ?? stage.image
        guard !capped || (output.width <= limits.maxDimension && output.height <= limits.maxDimension) else {
            throw AspectError(
                .badParam,
                "the result would be \(output) pixels, over limits.maxDimension \(limits.maxDimension); ask for a smaller size"
            )
        }
        let (rotate, flip) = Self.native(turned: stage.turned, flipH: flipHorizontally, flipV: flipVertically)
        let region = Self.sourceRegion(sized.region, src, trim: trim, whole: whole)
        var plan = Self.basePlan(
            src, r, region: region, rotate: rotate, flip: flip, stage: stage, found: sized.found, output: output)
        try decorate(&plan, stage, r, limits, output: output)
        return plan
    }

    /// What the trim cut, in the pixels of the source as `normalize` scaled it (`whole`).
    private static func scaledTrim(_ src: ThumborSource, whole: Size) -> Rect? {
        let (fx, fy) = (
            Double(whole.width) / Double(src.untrimmed.width), Double(whole.height) / Double(src.untrimmed.height)
        )
        return src.trim.map {
            Rect(
                x: Rounding.int(Double($0.x) * fx), y: Rounding.int(Double($0.y) * fy),
                width: max(1, Rounding.int((Double($0.width) * fx).rounded())),
                height: max(1, Rounding.int((Double($0.height) * fy).rounded())))
        }
    }

    /// The sides asked, each capped by `most` and, with `no_upscale`, by the normalized
    /// source's.
    private func askedSides(most: Int, whole: Size) -> (ThumborPath.Side, ThumborPath.Side) {
        var (askedW, askedH) = (width, height)
        if case .pixels(let n) = askedW, n > most { askedW = .pixels(most) }
        if case .pixels(let n) = askedH, n > most { askedH = .pixels(most) }
        if noUpscale {
            // thumbor's no_upscale: the asked sides capped by the (untrimmed) source's.
            if case .pixels(let n) = askedW { askedW = .pixels(min(n, whole.width)) }
            if case .pixels(let n) = askedH { askedH = .pixels(min(n, whole.height)) }
        }
        return (askedW, askedH)
    }

    /// The manual crop, in the trimmed source's pixels, clamped; an empty one is none. Also
    /// the size it leaves (the trimmed source's when there is none).
    private func manualCrop(_ src: ThumborSource, whole: Size, trim: Rect?) -> (region: Rect?, size: Size) {
        var region: Rect?
        var s = trim?.size ?? whole
        if var c = crop {
            if whole != src.untrimmed {
                // thumbor's translate_crop_coordinates: floor division into the scaled source.
                let (w0, h0, w1, h1) = (src.untrimmed.width, src.untrimmed.height, whole.width, whole.height)
                c = ThumborPath.Crop(
                    left: c.left * w1 / w0, top: c.top * h1 / h0, right: c.right * w1 / w0, bottom: c.bottom * h1 / h0)
            }
            let (dx, dy) = (trim?.x ?? 0, trim?.y ?? 0)
            func limit(_ v: Int, _ most: Int) -> Int { min(max(v, 0), most) }
            let l = limit(c.left - dx, s.width)
            let t = limit(c.top - dy, s.height)
            let rr = limit(c.right - dx, s.width)
            let b = limit(c.bottom - dy, s.height)
            if l < rr, t < b {
                region = Rect(x: l, y: t, width: rr - l, height: b - t)
                s = Size(width: rr - l, height: b - t)
            }
        }
        return (region, s)
    }

    /// The target's sides and the request's, on the (cropped) source of size `s`.
    private struct Target {
        /// The target: each side as asked, `orig` the source's, a free one in proportion.
        var tw: Double
        var th: Double
        /// What `fill` and `upscale` later read as the request's sides (0: none asked).
        var requestW: Double
        var requestH: Double
    }

    /// The target and the request's sides for the asked sides on a source of size `s`.
    private static func target(_ askedW: ThumborPath.Side, _ askedH: ThumborPath.Side, of s: Size) -> Target {
        let (sw, sh) = (Double(s.width), Double(s.height))
        func value(_ side: ThumborPath.Side, own: Double) -> Double? {
            switch side {
            case .free: nil
            case .orig: own
            case .pixels(let n): Double(n)
            }
        }
        let wv = value(askedW, own: sw)
        let hv = value(askedH, own: sh)
        return Target(
            tw: wv ?? hv.map { Self.pyRound($0 * sw / sh) } ?? sw,
            th: hv ?? wv.map { Self.pyRound($0 * sh / sw) } ?? sh,
            requestW: wv ?? 0, requestH: hv ?? 0)
    }

    /// What the resize leaves for the filters after it.
    struct Sized {
        /// The region of the (normalized, trimmed) source kept: the manual crop, then the
        /// focal crop.
        var region: Rect?
        var resized: Size
        /// The part of the resize kept (`smart`); nil: all of it.
        var window: Rect?
        /// Whether the window was chosen by what is found (the faces).
        var found: Bool
        var requestW: Double
        var requestH: Double
    }

    /// `fit-in` and its kinds: the target's sides turned to the source's orientation when
    /// adaptive, then the source resized to fit inside them (to cover them when full) if it
    /// is larger (or always when full); the request's sides grown to the resize's.
    private static func fitInResize(_ fit: ThumborPath.FitIn, _ s: Size, _ target: Target, region: Rect?) -> Sized {
        let (sw, sh) = (Double(s.width), Double(s.height))
        var (tw, th) = (target.tw, target.th)
        var (requestW, requestH) = (target.requestW, target.requestH)
        var resized = s
        let adaptive = fit == .adaptive || fit == .adaptiveFull
        if adaptive, (sw < sh && tw > th) || (sw > sh && tw < th) {
            (tw, th) = (th, tw)
            (requestW, requestH) = (requestH, requestW)
        }
        let full = fit == .full || fit == .adaptiveFull
        if full || tw < sw || th < sh {
            let (w1, h1) = (max(tw, 1), max(th, 1))
            let sign: Double = full ? -1 : 1
            var (rw, rh) = (w1, h1)
            if sw / w1 * sign >= sh / h1 * sign {
                rh = Self.pyRound(sh * w1 / sw + 1e-5)
            } else {
                rw = Self.pyRound(sw * h1 / sh + 1e-5)
            }
            requestW = max(requestW, rw)
            requestH = max(requestH, rh)
            resized = Size(width: Self.pixels(rw), height: Self.pixels(rh))
        }
        return Sized(
            region: region, resized: resized, window: nil, found: false, requestW: requestW, requestH: requestH)
    }

    /// No `fit-in`: the source resized to the target, its shape cut first around the focal
    /// points or the alignment's point (`autoCrop`, into the region), or (`smart`) as a
    /// window of the source scaled to cover the target.
    private func cropResize(_ s: Size, _ target: Target, region: Rect?) -> Sized {
        let (sw, sh) = (Double(s.width), Double(s.height))
        let (tw, th) = (target.tw, target.th)
        var region = region
        let resized: Size
        var window: Rect?
        var found = false
        let (w1, h1) = (tw == 0 ? 1 : tw, th == 0 ? 1 : th)
        let goal = Size(width: Self.pixels(tw), height: Self.pixels(th))
        if smart {
            // The window the target's shape takes, chosen by the faces (else libvips'
            // attention) on the source scaled to cover it.
            let scale = max(Double(goal.width) / sw, Double(goal.height) / sh)
            resized = Size(
                width: max(goal.width, Self.pixels(sw * scale)),
                height: max(goal.height, Self.pixels(sh * scale)))
            if resized != goal {
                window = Rect(
                    x: (resized.width - goal.width) / 2, y: (resized.height - goal.height) / 2,
                    width: goal.width, height: goal.height)
                found = true
            }
        } else {
            if Self.pyRound(sw / sh * 100) != Self.pyRound(w1 / h1 * 100) {
                let cut = autoCrop(s, tw: tw, th: th, w1: w1, h1: h1, region: region)
                region = Rect(
                    x: (region?.x ?? 0) + cut.x, y: (region?.y ?? 0) + cut.y, width: cut.width,
                    height: cut.height)
            }
            resized = goal
        }
        return Sized(
            region: region, resized: resized, window: window, found: found, requestW: target.requestW,
            requestH: target.requestH)
    }

    /// The region, in the normalized (trimmed) source's pixels, in the upright (trimmed)
    /// source's own pixels, kept inside it.
    private static func sourceRegion(_ region: Rect?, _ src: ThumborSource, trim: Rect?, whole: Size) -> Rect? {
        let (gx, gy) = (
            Double(src.size.width) / Double(trim?.width ?? whole.width),
            Double(src.size.height) / Double(trim?.height ?? whole.height)
        )
        return region.map { r in
            let x = min(src.size.width - 1, Rounding.int((Double(r.x) * gx).rounded()))
            let y = min(src.size.height - 1, Rounding.int((Double(r.y) * gy).rounded()))
            return Rect(
                x: x, y: y, width: max(1, min(src.size.width - x, Rounding.int((Double(r.width) * gx).rounded()))),
                height: max(1, min(src.size.height - y, Rounding.int((Double(r.height) * gy).rounded()))))
        }
    }

    /// The plan of the region, the turn and flip, the resize and the window, before what is
    /// drawn on it.
    private static func basePlan(
        _ src: ThumborSource, _ r: ThumbRequest, region: Rect?, rotate: Int, flip: Flip?, stage: Stage, found: Bool,
        output: Size
    ) -> Plan {
        let kept = region?.size ?? src.size
        let source = rotate % 180 == 90 ? Size(width: kept.height, height: kept.width) : kept
        let scaleX = Double(stage.resized.width) / Double(source.width)
        let scaleY = Double(stage.resized.height) / Double(source.height)
        let box = stage.window?.size ?? stage.image
        var plan = Plan(
            source: source, mode: stage.window != nil ? .fill : scaleX == scaleY ? .fit : .stretch, box: box,
            scale: max(scaleX, scaleY), scaleX: scaleX, scaleY: scaleY, resized: stage.resized, output: output,
            crop: stage.window, placement: nil, gravity: found ? .face : .center, shape: nil, cornerRadius: 0,
            background: r.background, upright: src.size, asked: output, canvas: output)
        plan.region = region
        plan.rotate = rotate
        plan.flip = flip
        return plan
    }

    /// What is drawn after the resize: the canvas's fill, the rounded corners, the
    /// request's effects, the background colour and the watermark.
    private func decorate(
        _ plan: inout Plan, _ stage: Stage, _ r: ThumbRequest, _ limits: RequestLimits, output: Size
    ) throws(AspectError) {
        if let c = stage.canvas {
            plan.extended = Rect(x: c.at.x, y: c.at.y, width: stage.image.width, height: stage.image.height)
            switch c.fill {
            case .color(let color):
                plan.canvasFill = .color(color)
                if fillTransparent { (plan.background, plan.flattened) = (color, true) }
            case .blur: plan.canvasFill = .blur
            case .auto: plan.canvasFill = .mean
            }
        }
        if let radius = cornerRadius {
            plan.shape = .rounded
            plan.cornerRadius = Double(radius)
            // thumbor paints the corners in the colour (the picture stays as it is).
            if let c = cornerColor { (plan.background, plan.flattened) = (c, true) }
        }
        Geometry.setEffects(&plan, r)
        plan.maxBytesUnmetKeepsFirst = r.maxBytes != nil
        if let c = backgroundColor {
            plan.background = c
            plan.flattened = true
        }
        if let m = watermark {
            let (mark, size) = try Geometry.watermark(m.name, limits)
            plan.watermark = placement(m, size, on: output)
            plan.watermark?.opacity *= mark.opacity
        }
    }

    /// thumbor's `normalize` with MAX_WIDTH and MAX_HEIGHT both `most`: a source over it
    /// on the side that is over by more is scaled to that side (its other side in
    /// proportion, half to even); over by as much on both, thumbor leaves it.
    static func normalized(_ size: Size, most: Int) -> Size {
        let (wd, hd) = (size.width - most, size.height - most)
        guard wd > 0 || hd > 0 else { return size }
        if wd > hd {
            return Size(
                width: most,
                height: max(1, Rounding.int(pyRound(Double(most) * Double(size.height) / Double(size.width)))))
        }
        if hd > wd {
            return Size(
                width: max(1, Rounding.int(pyRound(Double(most) * Double(size.width) / Double(size.height)))),
                height: most)
        }
        return size
    }

    /// Python's `n // 2`, which floors a negative.
    static func floorHalf(_ n: Int) -> Int { n >= 0 ? n / 2 : -((-n + 1) / 2) }

    /// thumbor's `auto_crop`: the part of the source with the target's shape, centred on
    /// the focal points' centre of mass (by default the alignment's point) as far as the
    /// edges allow, in its rounding.
    func autoCrop(_ s: Size, tw: Double, th: Double, w1: Double, h1: Double, region: Rect?) -> Rect {
        let (sw, sh) = (Double(s.width), Double(s.height))
        // The focal points inside the manual crop, moved by it; else the alignment's.
        var points = focalPoints
        if let r = region {
            points = points.compactMap { p in
                guard p.x >= r.x, p.x <= r.x + r.width, p.y >= r.y, p.y <= r.y + r.height else { return nil }
                return FocalPoint(x: p.x - r.x, y: p.y - r.y, weight: p.weight)
            }
        }
        let ha: Double = halign == .left ? 0 : halign == .right ? 1 : 0.5
        let va: Double = valign == .top ? 0 : valign == .bottom ? 1 : 0.5
        let aligned = FocalPoint(x: Rounding.int(sw * ha), y: Rounding.int(sh * va), weight: 1)
        if points.isEmpty { points = [aligned] }
        // Weights are areas (a focal() square's) or 1: positive, but guarded, since a
        // zero total would make the centre NaN.
        var total = points.reduce(0) { $0 + $1.weight }
        if !(total > 0) {
            points = [aligned]
            total = 1
        }
        let fx = (points.reduce(0) { $0 + Double($1.x) * $1.weight } / total).rounded(.down)
        let fy = (points.reduce(0) { $0 + Double($1.y) * $1.weight } / total).rounded(.down)
        let cw: Int
        let ch: Int
        if tw / sw > th / sh {
            (cw, ch) = (s.width, Rounding.int(Self.pyRound(sw * th / w1)))
        } else {
            (cw, ch) = (Rounding.int(Self.pyRound((tw * sh / h1).rounded(.up))), s.height)
        }
        let left = Rounding.int(Self.pyRound(min(max(fx - Double(cw) / 2, 0), sw - Double(cw))))
        let top = Rounding.int(Self.pyRound(min(max(fy - Double(ch) / 2, 0), sh - Double(ch))))
        let right = min(left + cw, s.width)
        let bottom = min(top + ch, s.height)
        return Rect(x: left, y: top, width: max(1, right - left), height: max(1, bottom - top))
    }

    /// The resize made larger or smaller so the image it leaves is `image`: the window,
    /// if any, scaled with it.
    static func rescaled(_ resized: Size, _ window: Rect?, to image: Size) -> (Size, Rect?) {
        guard let w = window else { return (image, nil) }
        let fx = Double(image.width) / Double(w.width)
        let fy = Double(image.height) / Double(w.height)
        let r = Size(
            width: max(image.width, Rounding.int((Double(resized.width) * fx).rounded())),
            height: max(image.height, Rounding.int((Double(resized.height) * fy).rounded())))
        return (
            r,
            Rect(
                x: (r.width - image.width) / 2, y: (r.height - image.height) / 2, width: image.width,
                height: image.height)
        )
    }

    /// The native turn (clockwise, before the flip) and flip that leave the picture as
    /// thumbor's flips followed by its counter-clockwise turns do.
    static func native(turned: Int, flipH: Bool, flipV: Bool) -> (rotate: Int, flip: Flip?) {
        let n = ((turned % 360) + 360) % 360
        if n == 0 { return (0, flipH && flipV ? .hv : flipH ? .h : flipV ? .v : nil) }
        switch (flipH, flipV) {
        case (false, false): return ((360 - n) % 360, nil)
        // A turn after a mirror is the mirror after the opposite turn.
        case (true, false): return (n, .h)
        // A vertical mirror is a horizontal one and a half turn.
        case (false, true): return ((n + 180) % 360, .h)
        case (true, true): return ((360 - (n + 180) % 360) % 360, nil)
        }
    }

    /// thumbor's watermark: scaled to fit its ratios of the picture (when given), placed
    /// from the left or top (a negative position from the right or bottom, `center` in the
    /// middle, `Np` a percent of the room), its alpha (0 opaque … 100 invisible) as opacity.
    func placement(_ m: Mark, _ mark: Size, on canvas: Size) -> WatermarkPlacement {
        var size = mark
        if m.widthRatio != nil || m.heightRatio != nil {
            let bw = m.widthRatio.map { Double(canvas.width) * $0 / 100 } ?? .infinity
            let bh = m.heightRatio.map { Double(canvas.height) * $0 / 100 } ?? .infinity
            let f = min(bw / Double(mark.width), bh / Double(mark.height))
            size = Size(width: Self.pixels(Double(mark.width) * f), height: Self.pixels(Double(mark.height) * f))
        }
        func at(_ p: Mark.Position, _ room: Int, _ own: Int) -> Int {
            switch p {
            case .center: return (room - own) / 2
            case .pixels(let n): return n >= 0 ? n : room - own + n
            case .percent(let v):
                let off = Rounding.int((Double(room - own) * abs(v) / 100).rounded(.towardZero))
                return v >= 0 ? off : room - own - off
            }
        }
        let rect = Rect(
            x: at(m.x, canvas.width, size.width), y: at(m.y, canvas.height, size.height), width: size.width,
            height: size.height)
        return WatermarkPlacement(name: m.name, rect: rect, opacity: Double(100 - min(100, max(0, m.alpha))) / 100)
    }
}
