/// SPEC's geometry, as a pure function of the source size and the request.
public enum Geometry {
    /// The box `bw × bh` in CSS pixels, from what was given (SPEC's box table), each
    /// side at least 1. `nil` when w, h and ratio are all given, or a side is not
    /// representable (far beyond every limit).
    public static func cssBox(source: Size, width: Int?, height: Int?, ratio: Ratio?) -> (
        width: Double, height: Double
    )? {
        let w0 = Double(source.width)
        let h0 = Double(source.height)
        let bw: Double?
        let bh: Double?
        switch (width.map(Double.init), height.map(Double.init), ratio) {
        case (let w?, let h?, nil): (bw, bh) = (w, h)
        case (let w?, nil, let r?): (bw, bh) = (w, r.height(forWidth: w))
        case (nil, let h?, let r?): (bw, bh) = (r.width(forHeight: h), h)
        case (let w?, nil, nil): (bw, bh) = (w, round(w * h0 / w0))
        case (nil, let h?, nil): (bw, bh) = (round(h * w0 / h0), h)
        case (nil, nil, let r?):
            (bw, bh) = w0 / h0 > r.value ? (r.width(forHeight: h0), h0) : (w0, r.height(forWidth: w0))
        case (nil, nil, nil): (bw, bh) = (w0, h0)
        case (_?, _?, _?): return nil
        }
        guard let bw, let bh else { return nil }
        return (max(1, bw), max(1, bh))
    }

    /// The plan for `request` on a source of `upright` pixels (after EXIF orientation):
    /// first the region and the rotation, which change what `W0 × H0` is, then the box.
    public static func plan(source upright: Size, request r: ThumbRequest, limits: RequestLimits) throws(AspectError)
        -> Plan
    {
        guard upright.width >= 1, upright.height >= 1,
            Double(upright.width) <= Rounding.ceiling, Double(upright.height) <= Rounding.ceiling
        else {
            throw AspectError(.unsupportedSource, "the source reports a size of \(upright), which is not an image")
        }
        let region = r.region.map { $0.pixels(of: upright) }
        let cut = region?.size ?? upright
        let source = r.rotate == 90 || r.rotate == 270 ? Size(width: cut.height, height: cut.width) : cut
        var plan = try planAfterRegion(source: source, request: r, limits: limits)
        try finish(&plan, request: r, limits: limits)
        plan.upright = upright
        plan.region = region
        plan.rotate = r.rotate
        plan.flip = r.flip
        return plan
    }

    static func planAfterRegion(source: Size, request r: ThumbRequest, limits: RequestLimits) throws(AspectError)
        -> Plan
    {
        guard let css = cssBox(source: source, width: r.width, height: r.height, ratio: r.ratio) else {
            if r.isOverdetermined { throw ThumbRequest.overdetermined }
            throw tooLarge("beyond any size", limits)
        }
        var bw = round(css.width * r.dpr)
        var bh = round(css.height * r.dpr)
        // `w` alone (or `h` alone): the other side follows the source from the given side
        // in device pixels, not from the CSS box rounded and then multiplied, which would
        // round it twice (333×111 at w=7, dpr=2.5: 18×6, never a squeezed 18×5).
        // (fill and stretch make the box itself, as SPEC's box table and dpr give it.)
        if r.ratio == nil, r.mode == .fit || r.mode == .pad, (r.width == nil) != (r.height == nil) {
            if r.width != nil, let w = bw {
                bh = round(w * Double(source.height) / Double(source.width)).map { max(1, $0) }
            } else if let h = bh {
                bw = round(h * Double(source.width) / Double(source.height)).map { max(1, $0) }
            }
        }
        // A box derived from the source alone (ratio alone, or nothing) is scaled down,
        // keeping its ratio, to fit maxDimension × maxDimension: `src=photo.jpg` on a
        // 6000-pixel photo is a 4096-wide image, not an error. Fitted in device pixels, so
        // a dpr cannot push it over the limit either. Only a box the client sized is a 400.
        if r.width == nil, r.height == nil, let w = bw, let h = bh {
            let fit = min(1, Double(limits.maxDimension) / w, Double(limits.maxDimension) / h)
            if fit < 1 {
                bw = round(w * fit).map { min(max(1, $0), Double(limits.maxDimension)) }
                bh = round(h * fit).map { min(max(1, $0), Double(limits.maxDimension)) }
            }
        }
        guard let bw, let bh, bw <= Double(limits.maxDimension), bh <= Double(limits.maxDimension) else {
            let shown = bw.flatMap { w in bh.map { h in "\(Rounding.int(w))×\(Rounding.int(h))" } } ?? "beyond any size"
            throw tooLarge(shown, limits, dpr: r.dpr)
        }
        return try planBox(
            source: source, box: Size(width: max(1, Rounding.int(bw)), height: max(1, Rounding.int(bh))), request: r)
    }

    private static func tooLarge(_ shown: String, _ limits: RequestLimits, dpr: Double = 1) -> AspectError {
        .badParam(
            "the requested box is \(shown) pixels (dpr \(decimalString(dpr)) included), over "
                + "limits.maxDimension \(limits.maxDimension); ask for a smaller w or h")
    }

    /// Scale, the no-upscale rule, output and crop or placement, for a box in device pixels.
    static func planBox(source: Size, box requested: Size, request r: ThumbRequest) throws(AspectError) -> Plan {
        let w0 = Double(source.width)
        let h0 = Double(source.height)
        var box = requested
        var sx = Double(box.width) / w0
        var sy = Double(box.height) / h0
        var s: Double =
            switch r.mode {
            case .fit, .pad: min(sx, sy)
            case .fill, .stretch: max(sx, sy)
            }
        // Which axis sets s, told by integer products (bw·H0 against bh·W0) rather than by
        // the Doubles: sides are then worked out as exact fractions, so that a half is a
        // half (69/1600 is not exact as a Double, and 2400 × it came out 103.4999… for
        // SPEC's 103.5, which rounds to 104).
        let widthFirst = Int64(box.width) * Int64(source.height) <= Int64(box.height) * Int64(source.width)
        var widthSets = r.mode == .fit || r.mode == .pad ? widthFirst : !widthFirst
        // `w` alone or `h` alone: the side given sets the scale, so `w=50` is 50 wide. The
        // other side of the box was rounded from the source's ratio, and letting it set
        // the scale would round the given side again (640×427 at w=50: 49×33).
        // (fill and stretch make the box itself, whichever side sets the scale.)
        if r.ratio == nil, r.mode == .fit || r.mode == .pad, (r.width == nil) != (r.height == nil) {
            widthSets = r.width != nil
            s = widthSets ? sx : sy
        }
        if !r.upscale, s > 1 {
            // Divide the box by s: the output needs no more pixels than the source has,
            // and keeps the requested aspect. Sides are at most the source's, so they fit.
            box =
                widthSets
                ? Size(
                    width: source.width,
                    height: Self.side(box.height, times: source.width, over: box.width) ?? source.height)
                : Size(
                    width: Self.side(box.width, times: source.height, over: box.height) ?? source.width,
                    height: source.height)
            sx = Double(box.width) / w0
            sy = Double(box.height) / h0
            s = 1
        }

        var plan = Plan(
            source: source, mode: r.mode, box: box, scale: s, scaleX: s, scaleY: s,
            resized: box, output: box, crop: nil, placement: nil, gravity: r.gravity,
            shape: r.shape, cornerRadius: 0, background: r.background, upright: source, asked: requested, canvas: box)

        // For fit and pad, s is at most box/source on both axes, so products stay within
        // the box. Only fill with upscaling, on a source of extreme aspect, can scale a
        // side past what an Int holds: an error, not a wrong plan.
        func scaled() throws(AspectError) -> Size {
            let sw: Int? = widthSets ? box.width : Self.side(source.width, times: box.height, over: source.height)
            let sh: Int? = widthSets ? Self.side(source.height, times: box.width, over: source.width) : box.height
            guard let sw, let sh else {
                throw AspectError(
                    .sourceTooLarge, "the source \(source) scaled by \(s) would be larger than any image can be")
            }
            return Size(width: sw, height: sh)
        }
        switch r.mode {
        case .fit:
            let scaled = try scaled()
            let out = Size(width: min(scaled.width, box.width), height: min(scaled.height, box.height))
            plan.resized = out
            plan.output = out
        case .fill:
            let scaled = try scaled()
            let resized = Size(width: max(scaled.width, box.width), height: max(scaled.height, box.height))
            plan.resized = resized
            plan.crop = cropWindow(in: resized, size: box, gravity: r.gravity, focus: (r.focusX, r.focusY))
        case .pad:
            let scaled = try scaled()
            let resized = Size(width: min(scaled.width, box.width), height: min(scaled.height, box.height))
            plan.resized = resized
            let a = r.gravity.anchor
            plan.placement = Rect(
                x: offset(free: box.width - resized.width, at: a.x),
                y: offset(free: box.height - resized.height, at: a.y),
                width: resized.width, height: resized.height)
        case .stretch:
            plan.scaleX = sx
            plan.scaleY = sy
            plan.scale = max(sx, sy)
        }

        return plan
    }

    /// After the geometry (SPEC: "After it"): `extend` out to the box as asked, the shape's
    /// radius on that canvas, then `padding` around it, the whole held to maxDimension.
    static func finish(_ plan: inout Plan, request r: ThumbRequest, limits: RequestLimits) throws(AspectError) {
        let result = plan.output
        if r.extend {
            let canvas = Size(
                width: max(result.width, plan.asked.width), height: max(result.height, plan.asked.height))
            if canvas != result {
                let a = (r.gravity.isCompass ? r.gravity : .center).anchor
                plan.extended = Rect(
                    x: offset(free: canvas.width - result.width, at: a.x),
                    y: offset(free: canvas.height - result.height, at: a.y), width: result.width,
                    height: result.height)
            }
            plan.output = canvas
        }
        plan.canvas = plan.output
        let short = Double(min(plan.canvas.width, plan.canvas.height))
        switch r.shape {
        case .circle, .capsule: plan.cornerRadius = short / 2
        case .rounded:
            let css = Double(r.radius ?? ThumbRequest.defaultRadius)
            plan.cornerRadius = min(short / 2, Double(Rounding.round(css * r.dpr) ?? 0))
        case nil: plan.cornerRadius = 0
        }
        setEffects(&plan, r)
        if let name = r.watermark {
            let (mark, size) = try watermark(name, limits)
            plan.watermark = mark.placement(name: name, size: size, on: plan.canvas, dpr: r.dpr)
        }
        if let p = r.padding {
            func device(_ css: Int) -> Int { Rounding.round(Double(css) * r.dpr) ?? 0 }
            let insets = Insets(
                top: device(p.top), right: device(p.right), bottom: device(p.bottom), left: device(p.left))
            let out = Size(
                width: plan.canvas.width + insets.left + insets.right,
                height: plan.canvas.height + insets.top + insets.bottom)
            guard out.width <= limits.maxDimension, out.height <= limits.maxDimension else {
                throw .badParam(
                    "padding makes the output \(out) pixels (dpr \(decimalString(r.dpr)) included), over "
                        + "limits.maxDimension \(limits.maxDimension); ask for less padding or a smaller box")
            }
            plan.padding = insets
            plan.output = out
        }
    }

    /// After the geometry, for the native planner and any other alike: the blur, the
    /// sharpening, the pixelation and the grey of the request.
    public static func setEffects(_ plan: inout Plan, _ r: ThumbRequest) {
        plan.blur = r.blur
        plan.sharpen = r.sharpen
        plan.pixelate = r.pixelate
        plan.grayscale = r.grayscale
    }

    /// A configured watermark and its image's size, read at start-up; one that was not is
    /// an internal error, for either planner (a request names only configured ones).
    public static func watermark(_ name: String, _ limits: RequestLimits) throws(AspectError) -> (Watermark, Size) {
        guard let mark = limits.watermarks[name], let size = mark.size else {
            throw AspectError(.internalError, "the watermark \(name) has not been read")
        }
        return (mark, size)
    }

    /// The window of `size` inside `image` that `gravity` keeps.
    static func cropWindow(in image: Size, size: Size, gravity: Gravity, focus: (Double, Double)) -> Rect {
        let freeX = image.width - size.width
        let freeY = image.height - size.height
        let x: Int
        let y: Int
        if gravity == .focus {
            x = clamp(Rounding.round(focus.0 * Double(image.width) - Double(size.width) / 2) ?? 0, 0, freeX)
            y = clamp(Rounding.round(focus.1 * Double(image.height) - Double(size.height) / 2) ?? 0, 0, freeY)
        } else {
            let a = gravity.anchor
            x = offset(free: freeX, at: a.x)
            y = offset(free: freeY, at: a.y)
        }
        return Rect(x: x, y: y, width: size.width, height: size.height)
    }

    private static func offset(free: Int, at anchor: Double) -> Int {
        clamp(Rounding.round(Double(free) * anchor) ?? 0, 0, max(0, free))
    }

    private static func clamp(_ v: Int, _ lo: Int, _ hi: Int) -> Int { min(max(v, lo), max(lo, hi)) }

    /// `a × b / c` by SPEC's rounding, at least 1, from the integers: the product is exact
    /// in a Double, and so is a quotient that is a half. Nil beyond any size.
    static func side(_ a: Int, times b: Int, over c: Int) -> Int? {
        Rounding.side(Double(a) * Double(b) / Double(max(1, c)))
    }

    /// SPEC's rounding (`Rounding.round`), as a Double for the box arithmetic.
    private static func round(_ x: Double) -> Double? { Rounding.round(x).map(Double.init) }
}
