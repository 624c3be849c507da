internal import CVips
import Core

/// The steps of the pipeline after the decode, one function each; `Thumbnailer.steps`
/// lists them in order.
enum Pipeline {
    /// The resize must give exactly the planned size: sizes are exact, by SPEC.
    static func exactSize(_ image: VImage, _ size: Size) throws(ImagingError) -> VImage {
        guard image.size == size else {
            throw ImagingError(
                .process, AspectError(.internalError, "processing the image failed (resize)"),
                detail: "thumbnail gave \(image.size), planned \(size)")
        }
        return image
    }

    /// After the geometry, before the shape: `blur` or `sharpen`, as 8-bit sRGB again.
    static func effects(_ image: VImage, _ plan: Plan) throws(ImagingError) -> VImage {
        var out = image
        if let sigma = plan.blur { out = try out.then("gaussblur") { cvips_gaussblur($0, $1, sigma) } }
        if let sigma = plan.sharpen { out = try out.then("sharpen") { cvips_sharpen($0, $1, sigma) } }
        if let n = plan.pixelate { out = try pixelate(out, n) }
        if plan.grayscale { out = try out.then("grey") { cvips_grey($0, $1) } }
        return plan.blur == nil && plan.sharpen == nil && !plan.grayscale ? out : try toSRGB(out)
    }

    /// Blocks of `n` × `n` pixels from the top left, each the mean of what it covers: the
    /// image shrunk to ceil(w / n) × ceil(h / n), enlarged `n` times by repeating each
    /// pixel, and cut back to its size.
    static func pixelate(_ image: VImage, _ n: Int) throws(ImagingError) -> VImage {
        let (w, h) = (image.width, image.height)
        let small = Size(width: (w + n - 1) / n, height: (h + n - 1) / n)
        // Each block's mean: the image first extended to whole blocks by copying its edge.
        let whole = try image.then("embed") {
            cvips_embed_copy($0, $1, Int32(small.width * n), Int32(small.height * n))
        }
        let shrunk = try whole.then("shrink") { cvips_shrink($0, $1, Double(n)) }
        let blocks = try shrunk.then("zoom") { cvips_zoom($0, $1, Int32(n)) }
        return try blocks.then("crop") { cvips_extract_area($0, $1, 0, 0, Int32(w), Int32(h)) }
    }

    /// A frame decoded whole (a region or a turn in the plan): the region cut out, turned
    /// and mirrored, as the plan says; else the frame as it is.
    static func reshape(_ frame: VImage, _ cut: Thumbnailer.RegionCut?, _ plan: Plan) throws(ImagingError) -> VImage {
        guard let cut else { return frame }
        var image = try exactSize(frame, cut.whole)
        if plan.region != nil {
            let w = cut.window
            image = try image.then("extract_area") {
                cvips_extract_area($0, $1, Int32(w.x), Int32(w.y), Int32(w.width), Int32(w.height))
            }
        }
        if plan.rotate != 0 {
            let angle =
                plan.rotate == 90 ? VIPS_ANGLE_D90 : plan.rotate == 180 ? VIPS_ANGLE_D180 : VIPS_ANGLE_D270
            image = try image.then("rot") { cvips_rot($0, $1, angle) }
        }
        if let flip = plan.flip {
            if flip != .v { image = try image.then("flip") { cvips_flip($0, $1, VIPS_DIRECTION_HORIZONTAL) } }
            if flip != .h { image = try image.then("flip") { cvips_flip($0, $1, VIPS_DIRECTION_VERTICAL) } }
        }
        return image
    }

    /// `extend`: the geometry's result on the canvas of the asked box, which shows the
    /// background, or what the plan fills it with (a colour, the picture's mean colour,
    /// the picture blurred).
    static func extend(_ image: VImage, _ plan: Plan, format: ImageFormat) throws(ImagingError) -> VImage {
        guard let e = plan.extended else { return image }
        return switch plan.canvasFill {
        case .color(let c)?: try place(image, at: e, on: plan.canvas, c, format: format)
        case .mean?: try place(image, at: e, on: plan.canvas, try mean(image), format: format)
        case .blur?: try overBlurred(image, at: e, on: plan.canvas)
        case nil: try place(image, at: e, on: plan.canvas, plan.background, format: format)
        }
    }

    /// `wm`: the configured watermark over the picture at its placement.
    static func watermark(_ image: VImage, _ plan: Plan, _ watermarks: [String: WatermarkImage])
        throws(ImagingError) -> VImage
    {
        guard let p = plan.watermark else { return image }
        guard let mark = watermarks[p.name] else {
            throw ImagingError(
                .process, AspectError(.internalError, "processing the image failed (watermark)"),
                detail: "the watermark \(p.name) was not read at start-up")
        }
        return try overlay(image, mark, at: p)
    }

    /// `shape`: clipped to it.
    static func shape(_ image: VImage, _ plan: Plan) throws(ImagingError) -> VImage {
        guard let shape = plan.shape else { return image }
        return try clip(image, shape: shape, radius: plan.cornerRadius)
    }

    /// `padding`: a margin of the background around the result.
    static func padding(_ image: VImage, _ plan: Plan, format: ImageFormat) throws(ImagingError) -> VImage {
        guard let p = plan.padding else { return image }
        return try place(
            image, at: Rect(x: p.left, y: p.top, width: plan.canvas.width, height: plan.canvas.height),
            on: plan.output, plan.background, format: format)
    }

    /// Transparency flattened onto the background (white by default) where the format
    /// has no alpha, or where the plan asks for it whatever the format.
    static func flatten(_ image: VImage, _ plan: Plan, format: ImageFormat) throws(ImagingError) -> VImage {
        guard !format.hasAlpha || plan.flattened, image.hasAlpha else { return image }
        let bg = plan.background ?? .white
        return try image.then("flatten") {
            cvips_flatten($0, $1, [Double(bg.red), Double(bg.green), Double(bg.blue)], 3)
        }
    }

    /// `image` at `at` on a canvas of `size` in `bg`, else transparent where the format
    /// has alpha, else white: pad bars, an extended canvas, padding.
    static func place(_ image: VImage, at: Rect, on size: Size, _ background: Color?, format: ImageFormat)
        throws(ImagingError) -> VImage
    {
        let bg = background ?? (format.hasAlpha ? .transparent : .white)
        var source = image
        if !source.hasAlpha, !bg.isOpaque {
            source = try source.then("alpha") { cvips_bandjoin_const1($0, $1, 255) }
        }
        let values =
            source.hasAlpha
            ? [Double(bg.red), Double(bg.green), Double(bg.blue), Double(bg.alpha)]
            : [Double(bg.red), Double(bg.green), Double(bg.blue)]
        return try source.then("embed") {
            cvips_embed(
                $0, $1, Int32(at.x), Int32(at.y), Int32(size.width), Int32(size.height), values, Int32(values.count))
        }
    }

    /// thumbor's `fill(auto)`: the picture's mean colour (each band's, truncated).
    static func mean(_ image: VImage) throws(ImagingError) -> Color {
        let srgb = try toSRGB(image)
        var m = [Double](repeating: 0, count: 4)
        guard cvips_band_means(srgb.pointer, &m, 4) == 0 else {
            throw ImagingError(
                .process, AspectError(.internalError, "processing the image failed (mean colour)"),
                detail: Vips.takeError())
        }
        func level(_ v: Double) -> UInt8 { UInt8(max(0, min(255, v.rounded(.towardZero)))) }
        return Color(red: level(m[0]), green: level(m[1]), blue: level(m[2]))
    }

    /// thumbor's `fill(blur)`: the picture over a copy of itself stretched to the canvas
    /// and blurred (thumbor's radius 50).
    static func overBlurred(_ image: VImage, at: Rect, on size: Size) throws(ImagingError) -> VImage {
        let stretched = try image.then("fill blur") {
            cvips_thumbnail_image_force($0, $1, Int32(size.width), Int32(size.height))
        }
        let blurred = try toSRGB(try stretched.then("fill blur") { cvips_gaussblur($0, $1, 25) })
        let over = try toSRGB(
            try blurred.then("fill blur") { cvips_composite_over($0, image.pointer, $1, Int32(at.x), Int32(at.y)) })
        // Composite always adds alpha: an opaque picture stays without it.
        guard !image.hasAlpha, over.hasAlpha else { return over }
        return try over.then("fill blur") { cvips_extract_band($0, $1, 0, 3) }
    }

    /// sRGB with 8 bits a band, alpha kept: grey, CMYK (already imported by the
    /// thumbnail step), 16-bit and float sources all end the same way.
    static func toSRGB(_ image: VImage) throws(ImagingError) -> VImage {
        var out = image
        if out.interpretation != VIPS_INTERPRETATION_sRGB {
            out = try out.then("colourspace") { cvips_colourspace($0, $1, VIPS_INTERPRETATION_sRGB) }
        }
        if out.bandFormat != VIPS_FORMAT_UCHAR {
            out = try out.then("cast") { cvips_cast_uchar($0, $1) }
        }
        return out
    }

    /// `fill`: the crop window (or libvips' attention/entropy choice); `pad`: the image
    /// placed on the background; `fit` and `stretch`: as resized.
    static func cropOrPlace(_ image: VImage, _ plan: Plan, format: ImageFormat) throws(ImagingError) -> VImage {
        switch plan.mode {
        case .fit, .stretch:
            return image
        case .fill:
            let out = plan.box
            switch plan.gravity {
            case .smart, .entropy:
                if image.size == out { return image }
                let interesting = plan.gravity == .smart ? VIPS_INTERESTING_ATTENTION : VIPS_INTERESTING_ENTROPY
                return try image.then("smartcrop") {
                    cvips_smartcrop($0, $1, Int32(out.width), Int32(out.height), Int32(interesting.rawValue))
                }
            default:
                guard let c = plan.crop, image.size != out else { return image }
                return try image.then("crop") {
                    cvips_extract_area($0, $1, Int32(c.x), Int32(c.y), Int32(c.width), Int32(c.height))
                }
            }
        case .pad:
            guard let p = plan.placement, p.size != plan.box else { return image }
            return try place(image, at: p, on: plan.box, plan.background, format: format)
        }
    }

    /// Clips to the shape: the image's alpha (opaque if it had none) times the
    /// antialiased coverage mask.
    static func clip(_ image: VImage, shape: Shape, radius: Double) throws(ImagingError) -> VImage {
        let mask = try VImage.fromPixels(
            ShapeMask.coverage(size: image.size, shape: shape, radius: radius), width: image.width,
            height: image.height, bands: 1)
        guard image.hasAlpha else {
            return try image.then("clip") { cvips_bandjoin2($0, mask.pointer, $1) }
        }
        let colour = try image.then("clip") { cvips_extract_band($0, $1, 0, Int32(image.bands - 1)) }
        let alpha = try image.then("clip") { cvips_extract_band($0, $1, Int32(image.bands - 1), 1) }
        let product = try alpha.then("clip") { cvips_multiply($0, mask.pointer, $1) }
        let scaled = try product.then("clip") { cvips_linear1($0, $1, 1.0 / 255, 0, 1) }
        return try colour.then("clip") { cvips_bandjoin2($0, scaled.pointer, $1) }
    }
}
