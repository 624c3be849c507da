/// What a renderer reads from a source's header and tells the planner, before any pixel
/// is decoded.
public struct SourceDescription: Equatable, Sendable {
    /// Upright (after EXIF orientation): what the geometry plans on.
    public var size: Size
    public var hasAlpha: Bool
    /// The loader's name for it: `jpeg`, `png`, `webp`, …
    public var format: String
    public var bytes: Int64
    /// Frames of an animated source; 1 for a still one.
    public var frames: Int
    /// Pages of a paged source (PDF, TIFF, HEIF); 1 for any other. `size` is the asked page's.
    public var pages: Int

    public init(size: Size, hasAlpha: Bool, format: String, bytes: Int64, frames: Int = 1, pages: Int = 1) {
        self.size = size
        self.hasAlpha = hasAlpha
        self.format = format
        self.bytes = bytes
        self.frames = frames
        self.pages = pages
    }

    /// The formats drawn from vectors at the scale the plan needs (SPEC: Source formats).
    public static let vectorFormats: Set<String> = ["svg", "pdf"]

    /// Drawn at any scale, so sharp at any size: no-upscaling does not apply to it.
    public var isVector: Bool { Self.vectorFormats.contains(format) }

    /// A 400 naming the page count when `page` is past the last one.
    public func check(page: Int) throws(AspectError) {
        guard page <= pages else {
            throw AspectError(
                .badParam, "page=\(page) is past the last page: the source has \(pages) page\(pages == 1 ? "" : "s")")
        }
    }
}

/// What the planner asks a renderer for: the plan, the output format, the quality.
public struct RenderOrder: Equatable, Sendable {
    public var plan: Plan
    public var format: ImageFormat
    public var quality: Int?
    /// Every frame goes through the plan, and the output is animated (WebP or GIF).
    public var animated: Bool

    public init(plan: Plan, format: ImageFormat, quality: Int?, animated: Bool = false) {
        self.plan = plan
        self.format = format
        self.quality = quality
        self.animated = animated
    }

    /// The order for `request` on a source described so: Core's geometry, and the format
    /// `format=auto` resolves to for this client and this result.
    public static func plan(
        _ request: ThumbRequest, source: SourceDescription, limits: RequestLimits, accept: String?
    ) throws(AspectError) -> RenderOrder {
        try source.check(page: request.page)
        var geometry = request
        // A vector is drawn at the scale the plan needs: it has no pixels to run out of.
        if source.isVector { geometry.upscale = true }
        let plan = try Geometry.plan(source: source.size, request: geometry, limits: limits)
        // An animation stays one (SPEC: Animated sources): auto is WebP where accepted, else
        // GIF; JPEG, PNG and AVIF hold its first frame, as does frames=1.
        let moving = source.frames > 1 && !request.firstFrameOnly
        let format: ImageFormat =
            moving && request.format == .auto
            ? (accept.map { AcceptHeader.accepts($0, "image/webp") } == true ? .webp : .gif)
            : request.format.resolve(
                accept: accept, resultHasAlpha: plan.hasAlpha(sourceHasAlpha: source.hasAlpha),
                autoAvif: limits.autoAvif, autoJxl: limits.autoJxl)
        return RenderOrder(
            plan: plan, format: format, quality: request.quality,
            animated: moving && (format == .webp || format == .gif))
    }
}

/// What `/info` is made of: the header's facts and a small upright decode.
public struct SourceFacts: Equatable, Sendable {
    public var description: SourceDescription
    /// EXIF orientation, 1 … 8.
    public var orientation: Int
    /// Frames of an animated source; 1 for a still one.
    public var frames: Int
    /// Pages of a paged source (TIFF, HEIF, PDF); 1 for any other.
    public var pages: Int
    /// The source shrunk to fit 100×100, upright, sRGB, RGBA with 8 bits a channel.
    public var previewWidth: Int
    public var previewHeight: Int
    public var previewRGBA: [UInt8]

    public init(
        description: SourceDescription, orientation: Int, frames: Int, pages: Int = 1, previewWidth: Int,
        previewHeight: Int, previewRGBA: [UInt8]
    ) {
        self.description = description
        self.orientation = orientation
        self.frames = frames
        self.pages = pages
        self.previewWidth = previewWidth
        self.previewHeight = previewHeight
        self.previewRGBA = previewRGBA
    }
}
