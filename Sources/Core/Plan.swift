/// A size in pixels; both sides at least 1 wherever a plan holds one.
public struct Size: Equatable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var description: String { "\(width)×\(height)" }

    /// Its pixels, times `frames`: `Int64.max` where the product would overflow (a plan
    /// of a dialect can hold sides up to `Rounding.ceiling`), so a limit compared with it
    /// refuses the size instead of trapping.
    public func pixels(frames: Int = 1) -> Int64 {
        let (area, over) = Int64(width).multipliedReportingOverflow(by: Int64(height))
        let (all, overAll) = area.multipliedReportingOverflow(by: Int64(frames))
        return over || overAll ? Int64.max : all
    }
}

/// A rectangle in pixels, its origin at the top left.
public struct Rect: Equatable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var size: Size { Size(width: width, height: height) }

    public var description: String { "\(width)×\(height)+\(x)+\(y)" }
}

/// Margins in pixels: top, right, bottom, left.
public struct Insets: Equatable, Hashable, Sendable, Codable {
    public var top: Int
    public var right: Int
    public var bottom: Int
    public var left: Int

    public init(top: Int, right: Int, bottom: Int, left: Int) {
        self.top = top
        self.right = right
        self.bottom = bottom
        self.left = left
    }

    public static let zero = Insets(top: 0, right: 0, bottom: 0, left: 0)
}

/// What to do to a source to answer a request: every number the imaging step needs,
/// computed by `Geometry.plan` and nothing else.
/// What an extended canvas shows around the picture (a planner's; no native parameter
/// says it: docs/api.md, "What only a dialect says").
public enum CanvasFill: Equatable, Sendable, Codable {
    case color(Color)
    /// The picture stretched over the canvas and blurred.
    case blur
    /// The picture's mean colour.
    case mean
}

public struct Plan: Equatable, Sendable, Codable {
    /// The source, after EXIF orientation.
    public var source: Size
    public var mode: Mode
    /// The box in device pixels: `dpr` applied, and divided by `s` where the no-upscale
    /// rule applied.
    public var box: Size
    /// The scale `s` of SPEC; for `stretch`, the larger of `scaleX` and `scaleY`.
    public var scale: Double
    /// The scale of each axis: both `scale`, except for `stretch`.
    public var scaleX: Double
    public var scaleY: Double
    /// The source scaled: the image the resize step makes.
    public var resized: Size
    /// The final image's size.
    public var output: Size
    /// `fill`: the window of `resized` that is kept. For `smart` and `entropy` it is the
    /// centre window, a default: libvips picks the window of this size.
    public var crop: Rect?
    /// `pad`: where `resized` sits inside `output`.
    public var placement: Rect?
    public var gravity: Gravity
    public var shape: Shape?
    /// The corner radius of the shape in output pixels (half the short side for
    /// `circle` and `capsule`); 0 without a shape.
    public var cornerRadius: Double
    /// The colour asked for, if any (pad bars, flattened corners).
    public var background: Color?
    /// Before the geometry: the source as decoded (after EXIF orientation), the region
    /// of it used (nil: all of it), then the rotation and the flip. `source` is what they
    /// leave: the `W0 × H0` the geometry planned on.
    public var upright: Size
    public var region: Rect?
    public var rotate = 0
    public var flip: Flip?
    /// After the geometry, before the shape.
    public var blur: Double?
    public var sharpen: Double?
    /// `pixelate`: blocks of this many output pixels, after the geometry.
    public var pixelate: Int?
    /// `wm`: the watermark overlaid after the effects, before the shape.
    public var watermark: WatermarkPlacement?
    /// The box as asked, in device pixels, before no-upscaling divided it.
    public var asked: Size
    /// `extend`: where the geometry's result sits on a canvas of the asked box (`canvas`);
    /// nil when nothing was extended.
    public var extended: Rect?
    /// The image the shape is cut from: the geometry's result, extended. `output` is this
    /// with `padding` around it.
    public var canvas: Size
    /// `padding`, in device pixels.
    public var padding: Insets?
    /// What the extended canvas shows (nil: `background`); a planner's alone.
    public var canvasFill: CanvasFill?
    /// The picture in shades of grey (Rec. 601 luma), after the geometry; a dialect's alone.
    public var grayscale = false
    /// The result flattened onto `background` whatever the format (else only a format
    /// without alpha is); a planner's alone.
    public var flattened = false
    /// A size that no quality meets gives the result at the asked quality (the native
    /// `maxbytes` gives the smallest one made); a planner's alone.
    public var maxBytesUnmetKeepsFirst = false

    /// A plan of the geometry's sizes; what lies before and after it (a region, a
    /// rotation, the effects, padding) is set on it after.
    public init(
        source: Size, mode: Mode, box: Size, scale: Double, scaleX: Double, scaleY: Double, resized: Size,
        output: Size, crop: Rect?, placement: Rect?, gravity: Gravity, shape: Shape?, cornerRadius: Double,
        background: Color?, upright: Size, asked: Size, canvas: Size
    ) {
        self.source = source
        self.mode = mode
        self.box = box
        self.scale = scale
        self.scaleX = scaleX
        self.scaleY = scaleY
        self.resized = resized
        self.output = output
        self.crop = crop
        self.placement = placement
        self.gravity = gravity
        self.shape = shape
        self.cornerRadius = cornerRadius
        self.background = background
        self.upright = upright
        self.asked = asked
        self.canvas = canvas
    }

    /// Whether anything happens before the geometry.
    public var reshapesSource: Bool { region != nil || rotate != 0 || flip != nil }

    /// Whether the result has transparent pixels: a shape, transparent pad bars, or a
    /// source with alpha.
    public func hasAlpha(sourceHasAlpha: Bool) -> Bool {
        if shape != nil { return true }
        let bars = (mode == .pad && placement?.size != box) || extended != nil || padding != nil
        if bars, !(background?.isOpaque ?? false) { return true }
        return sourceHasAlpha
    }
}

extension Plan {
    /// The same result as `other`: every size equal, every position within a pixel (SPEC: a
    /// crop or placement may be off by one pixel). How a dialect's plan is held to the
    /// native one before the two share a cache entry.
    public func isSameResult(as other: Plan) -> Bool {
        func near(_ x: Rect?, _ y: Rect?) -> Bool {
            guard let x, let y else { return x == nil && y == nil }
            return x.size == y.size && abs(x.x - y.x) <= 1 && abs(x.y - y.y) <= 1
        }
        // A window, region or placement the size of the whole image is none.
        func window(_ p: Plan) -> Rect? { p.crop.flatMap { $0.size == p.resized ? nil : $0 } }
        func region(_ p: Plan) -> Rect? { p.region.flatMap { $0.size == p.upright ? nil : $0 } }
        func extended(_ p: Plan) -> Rect? { p.extended.flatMap { $0.size == p.canvas ? nil : $0 } }
        let (a, b) = (self, other)
        return a.output == b.output && a.resized == b.resized && a.canvas == b.canvas && near(window(a), window(b))
            && near(region(a), region(b)) && near(extended(a), extended(b))
            && (a.padding ?? .zero) == (b.padding ?? .zero) && a.rotate == b.rotate && a.flip == b.flip
    }
}
