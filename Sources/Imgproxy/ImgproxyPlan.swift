import Core

extension ImgproxyGeometry {
    /// The plan of a dialect request: imgproxy's sizes (`sizes`), its crop of the source
    /// (by `crop` and its gravity, after the rotation and flips it names), its crop of the
    /// result (`fill`, `fill-down`, `auto`), `extend`, `extend_aspect_ratio` and `padding`
    /// in its order and rounding, expressed as the steps Aspect's renderer takes.
    public func plan(source upright: Size, request r: ThumbRequest, isVector: Bool, limits: RequestLimits)
        throws(AspectError) -> Plan
    {
        guard upright.width >= 1, upright.height >= 1 else {
            throw AspectError(.unsupportedSource, "the source reports a size of \(upright), which is not an image")
        }
        let turned = rotate % 180 == 90 ? Size(width: upright.height, height: upright.width) : upright
        let toScale = Size(
            width: IMath.minNonZero(Self.cropSize(turned.width, cropWidth), turned.width),
            height: IMath.minNonZero(Self.cropSize(turned.height, cropHeight), turned.height))
        var region: Rect?
        if toScale.width < turned.width || toScale.height < turned.height {
            let g = cropGravity ?? gravity
            guard !g.kind.isFound else {
                throw AspectError(
                    .badParam,
                    "crop with gravity \(g.kind.rawValue) is not supported here; give a compass gravity or fp")
            }
            let at = IMath.position(turned, toScale, g, dpr: 1)
            region = unturned(Rect(x: at.x, y: at.y, width: toScale.width, height: toScale.height), in: turned)
        } else if toScale.width > turned.width || toScale.height > turned.height {
            // A crop larger than the image keeps all of it.
            region = nil
        }
        let source = region.map { rotate % 180 == 90 ? Size(width: $0.height, height: $0.width) : $0.size } ?? turned
        let s = sizes(source, isVector: isVector)
        let scaled = Size(width: max(1, s.scaled.width), height: max(1, s.scaled.height))

        // cropToResult: the window the result keeps, by `gravity` (smart: libvips' choice).
        var box = scaled
        var crop: Rect?
        var plannedGravity = Gravity.center
        let window = Size(
            width: IMath.minNonZero(s.resultCrop.width, scaled.width),
            height: IMath.minNonZero(s.resultCrop.height, scaled.height))
        if window.width < scaled.width || window.height < scaled.height {
            let w = Size(width: min(window.width, scaled.width), height: min(window.height, scaled.height))
            if gravity.kind.isFound {
                plannedGravity = gravity.kind == .sm ? .smart : .face
                crop = Rect(
                    x: (scaled.width - w.width) / 2, y: (scaled.height - w.height) / 2, width: w.width, height: w.height
                )
            } else {
                let at = IMath.position(scaled, w, gravity, dpr: s.dprScale)
                crop = Rect(x: at.x, y: at.y, width: w.width, height: w.height)
            }
            box = w
        }

        // extend, then extend_aspect_ratio: the result placed on a larger canvas.
        var canvas = box
        var placed = (x: 0, y: 0)
        func grow(to target: Size, _ g: ImgproxyGravity) {
            guard target.width > canvas.width || target.height > canvas.height else { return }
            let outer = Size(
                width: max(canvas.width, target.width <= 0 ? canvas.width : target.width),
                height: max(canvas.height, target.height <= 0 ? canvas.height : target.height))
            let at = IMath.position(outer, canvas, g, dpr: s.dprScale)
            placed = (placed.x + at.x, placed.y + at.y)
            canvas = outer
        }
        if extend { grow(to: s.target, extendGravity) }
        if extendAspectRatio, s.extendAspectRatio.width > 0, s.extendAspectRatio.height > 0 {
            grow(to: s.extendAspectRatio, extendAspectRatioGravity)
        }
        let pad = padding.map { IMath.scaleToEven($0, s.dprScale) }
        let output = Size(width: canvas.width + pad[1] + pad[3], height: canvas.height + pad[0] + pad[2])
        guard output.width <= limits.maxDimension, output.height <= limits.maxDimension else {
            throw AspectError(
                .badParam,
                "the result would be \(output) pixels, over limits.maxDimension \(limits.maxDimension); ask for a smaller size"
            )
        }
        var plan = Plan(
            source: source, mode: crop == nil ? .fit : .fill, box: box, scale: s.wScale, scaleX: s.wScale,
            scaleY: s.hScale, resized: scaled, output: output, crop: crop, placement: nil, gravity: plannedGravity,
            shape: nil, cornerRadius: 0, background: r.background, upright: upright,
            asked: Size(width: max(1, s.target.width), height: max(1, s.target.height)), canvas: canvas)
        plan.region = region
        plan.rotate = rotate
        plan.flip = flip
        if canvas != box { plan.extended = Rect(x: placed.x, y: placed.y, width: box.width, height: box.height) }
        if pad.contains(where: { $0 > 0 }) {
            plan.padding = Insets(top: pad[0], right: pad[1], bottom: pad[2], left: pad[3])
        }
        Geometry.setEffects(&plan, r)
        if let wm = watermark {
            let (mark, size) = try Geometry.watermark(wm.name, limits)
            // Its opacity times the configured one, as imgproxy's times IMGPROXY_WATERMARK_OPACITY.
            plan.watermark = placement(wm, size, on: canvas, dprScale: s.dprScale)
            plan.watermark?.opacity = wm.opacity * mark.opacity
        }
        return plan
    }

    /// imgproxy's watermark: fitted into `scale` of the result's sides (0: its own size,
    /// no larger than the result), placed by its gravity and offsets (× the DPR scale).
    func placement(_ wm: ImgproxyWatermark, _ mark: Size, on canvas: Size, dprScale: Double) -> WatermarkPlacement {
        var size = mark
        if wm.scale > 0 || mark.width > canvas.width || mark.height > canvas.height {
            let boxW = wm.scale > 0 ? max(1, IMath.scaleToEven(canvas.width, wm.scale)) : canvas.width
            let boxH = wm.scale > 0 ? max(1, IMath.scaleToEven(canvas.height, wm.scale)) : canvas.height
            let f = min(Double(boxW) / Double(mark.width), Double(boxH) / Double(mark.height))
            size = Size(
                width: max(1, min(canvas.width, IMath.round(Double(mark.width) * f))),
                height: max(1, min(canvas.height, IMath.round(Double(mark.height) * f))))
        }
        let at = IMath.position(canvas, size, wm.position, dpr: dprScale)
        return WatermarkPlacement(
            name: wm.name, rect: Rect(x: at.x, y: at.y, width: size.width, height: size.height), opacity: wm.opacity)
    }

    /// A window of the rotated and flipped source, as the region of the upright one that
    /// Aspect cuts before turning it.
    func unturned(_ r: Rect, in turned: Size) -> Rect {
        var x = flipHorizontal ? turned.width - r.x - r.width : r.x
        var y = flipVertical ? turned.height - r.y - r.height : r.y
        var (w, h) = (r.width, r.height)
        switch rotate {
        case 90: (x, y, w, h) = (y, turned.width - x - w, h, w)
        case 180: (x, y) = (turned.width - x - w, turned.height - y - h)
        case 270: (x, y, w, h) = (turned.height - y - h, x, h, w)
        default: break
        }
        return Rect(x: x, y: y, width: w, height: h)
    }
}
