/// What a renderer reads from a source's header and tells the planner, before any pixel
/// is decoded.
public struct SourceDescription: Equatable, Sendable {
    /// Upright (after EXIF orientation): what the geometry plans on.
    public var size: Size
    public var hasAlpha: Bool
    /// The loader's name for it: `jpeg`, `png`, `webp`, …
    public var format: String
    public var bytes: Int64

    public init(size: Size, hasAlpha: Bool, format: String, bytes: Int64) {
        self.size = size
        self.hasAlpha = hasAlpha
        self.format = format
        self.bytes = bytes
    }
}

/// What the planner asks a renderer for: the plan, the output format, the quality.
public struct RenderOrder: Equatable, Sendable {
    public var plan: Plan
    public var format: ImageFormat
    public var quality: Int?

    public init(plan: Plan, format: ImageFormat, quality: Int?) {
        self.plan = plan
        self.format = format
        self.quality = quality
    }

    /// The order for `request` on a source described so: Core's geometry, and the format
    /// `format=auto` resolves to for this client and this result.
    public static func plan(
        _ request: ThumbRequest, source: SourceDescription, limits: RequestLimits, accept: String?
    ) throws(AspectError) -> RenderOrder {
        let plan = try Geometry.plan(source: source.size, request: request, limits: limits)
        let format = request.format.resolve(
            accept: accept, resultHasAlpha: plan.hasAlpha(sourceHasAlpha: source.hasAlpha))
        return RenderOrder(plan: plan, format: format, quality: request.quality)
    }
}
