/// A watermark named in the configuration (SPEC: Watermarks): an image under the root,
/// scaled to a fraction of the output's width and placed by a compass gravity.
public struct Watermark: Equatable, Sendable {
    /// The image's path under `images.root`.
    public var src: String
    /// Where it sits: a compass gravity or `center`.
    public var position: Gravity
    /// 0 (invisible) … 1 (as drawn).
    public var opacity: Double
    /// Its width as a fraction of the output's (the canvas the shape is cut from).
    public var scale: Double
    /// The gap to the edges it is placed against, in CSS pixels.
    public var margin: Int
    /// Set when the image has been read (at start-up): its size, and a digest of its
    /// pixels, which is part of the cache key of every result that shows it.
    public var size: Size?
    public var digest: String

    public init(
        src: String, position: Gravity = .southeast, opacity: Double = 1, scale: Double = 0.2, margin: Int = 0,
        size: Size? = nil, digest: String = ""
    ) {
        self.src = src
        self.position = position
        self.opacity = opacity
        self.scale = scale
        self.margin = margin
        self.size = size
        self.digest = digest
    }

    /// Where it goes on a canvas of `canvas` device pixels: `scale` of the width (its
    /// height following its own ratio, both at least 1, made smaller to fit a canvas too
    /// short for it), `margin` × `dpr` from the edges `position` names, inside the canvas.
    public func placement(name: String, size mark: Size, on canvas: Size, dpr: Double) -> WatermarkPlacement {
        var w = max(1, min(canvas.width, Rounding.round(scale * Double(canvas.width)) ?? 1))
        var h = max(1, Rounding.round(Double(w) * Double(mark.height) / Double(mark.width)) ?? 1)
        if h > canvas.height {
            h = canvas.height
            w = max(1, min(canvas.width, Rounding.round(Double(h) * Double(mark.width) / Double(mark.height)) ?? 1))
        }
        let m = Rounding.round(Double(margin) * dpr) ?? 0
        func offset(_ free: Int, _ anchor: Double) -> Int {
            let at = anchor == 0 ? m : anchor == 1 ? free - m : free / 2
            return max(0, min(free, at))
        }
        let a = position.anchor
        return WatermarkPlacement(
            name: name,
            rect: Rect(x: offset(canvas.width - w, a.x), y: offset(canvas.height - h, a.y), width: w, height: h),
            opacity: opacity)
    }
}

/// A watermark as a plan places it: which one, where on the canvas, how opaque.
public struct WatermarkPlacement: Equatable, Sendable, Codable {
    public var name: String
    /// In device pixels on the canvas (the image before `padding`).
    public var rect: Rect
    public var opacity: Double

    public init(name: String, rect: Rect, opacity: Double) {
        self.name = name
        self.rect = rect
        self.opacity = opacity
    }
}
