/// What a renderer reads from a source's header and tells the planner, before any pixel
/// is decoded.
public struct SourceDescription: Equatable, Sendable, Codable {
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
    /// A video's length in seconds; nil for any other source.
    public var duration: Double?
    /// When `trim` cut the source: the part of the upright source kept (`size` is its size)
    /// and the upright source's size before (a planner that crops in the untrimmed
    /// source's coordinates reads them).
    public var trim: Rect?
    public var untrimmed: Size?

    public init(
        size: Size, hasAlpha: Bool, format: String, bytes: Int64, frames: Int = 1, pages: Int = 1,
        duration: Double? = nil
    ) {
        self.size = size
        self.hasAlpha = hasAlpha
        self.format = format
        self.bytes = bytes
        self.frames = frames
        self.pages = pages
        self.duration = duration
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
public struct RenderOrder: Equatable, Sendable, Codable {
    public var plan: Plan
    public var format: ImageFormat
    public var quality: Int?
    /// Every frame goes through the plan, and the output is animated (WebP or GIF).
    public var animated: Bool
    /// A video's moments to show, in seconds: one for a still, N for a preview (the output
    /// is animated only when the format can be; else the first alone is made).
    public var moments: [Double]
    /// How long each frame of a video's preview is shown, in ms.
    public var frameDelayMs: Int
    /// `maxbytes`: the quality is lowered until the result fits.
    public var maxBytes: Int?
    /// `q=auto` (or `output.quality=auto` with no quality asked): the quality is searched.
    public var autoQuality: AutoQuality?
    /// Whether the copyright is kept in the metadata; nil: `output.keepCopyright`.
    public var keepCopyright: Bool?
    /// `format=best`: the formats weighed (`format` is then the one the pipeline shapes
    /// the picture for, `auto`'s choice); nil for any other format.
    public var best: BestCandidates?
    /// A storyboard: `moments` are its sheet's tiles, each planned by `plan`, laid out
    /// on this grid (SPEC: Video); nil for anything else.
    public var grid: Grid?

    /// The size of the result: the plan's output; a storyboard's whole grid of them; a
    /// video's sides rounded down to even (yuv420p needs them so).
    public var resultSize: Size {
        if let grid { return Size(width: grid.columns * plan.output.width, height: grid.rows * plan.output.height) }
        guard format.isVideo else { return plan.output }
        return Size(width: max(2, plan.output.width & ~1), height: max(2, plan.output.height & ~1))
    }

    public init(
        plan: Plan, format: ImageFormat, quality: Int?, animated: Bool = false, moments: [Double] = [],
        frameDelayMs: Int = 0, maxBytes: Int? = nil, autoQuality: AutoQuality? = nil
    ) {
        self.plan = plan
        self.format = format
        self.quality = quality
        self.animated = animated
        self.moments = moments
        self.frameDelayMs = frameDelayMs
        self.maxBytes = maxBytes
        self.autoQuality = autoQuality
    }

    /// The moment of a video shown without `t` (SPEC: Video): `video.defaultSeconds`, or
    /// the middle of a clip shorter than twice that.
    public static func defaultMoment(duration: Double, limits: RequestLimits) -> Double {
        duration < 2 * limits.videoDefaultSeconds ? duration / 2 : limits.videoDefaultSeconds
    }

    /// The moments `request` asks of a video `duration` seconds long: from `t` (400 past the
    /// end), one, or N spread evenly from `t` to the end.
    public static func moments(_ request: ThumbRequest, duration: Double, limits: RequestLimits) throws(AspectError)
        -> [Double]
    {
        let start = request.time ?? defaultMoment(duration: duration, limits: limits)
        if let t = request.time, t > duration {
            throw AspectError(
                .badParam,
                "t=\(NumberSyntax.text(t)) is past the end: the video is \(NumberSyntax.text((duration * 1000).rounded() / 1000)) s long"
            )
        }
        let n = request.frameCount ?? 1
        return (0..<n).map { start + Double($0) * (duration - start) / Double(n) }
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
        let plan =
            if let planner = request.planner {
                try planner.rules.plan(source: source, request: request, limits: limits)
            } else {
                try Geometry.plan(source: source.size, request: geometry, limits: limits)
            }
        var moments: [Double] = []
        var grid: Grid?
        if let tiles = request.tiles {
            guard let duration = source.duration else {
                throw AspectError(
                    .badParam, "tiles=\(tiles) makes a storyboard of a video, and this source is \(source.format)")
            }
            let board = try Storyboard(request, grid: tiles, duration: duration)
            moments = try board.moments(sheet: request.sheet)
            let sheet = board.sheetSize(tile: plan.output)
            guard max(sheet.width, sheet.height) <= limits.maxDimension else {
                throw AspectError(
                    .badParam,
                    "tiles=\(tiles) of \(plan.output) makes a sheet of \(sheet), over limits.maxDimension \(limits.maxDimension): ask for smaller tiles or fewer of them"
                )
            }
            grid = tiles
        } else if let duration = source.duration {
            moments = try Self.moments(request, duration: duration, limits: limits)
        } else if let n = request.frameCount {
            throw AspectError(
                .badParam,
                "frames=\(n) makes a preview of a video, and this source is \(source.format): give frames=1 or none")
        }
        // An animation stays one (SPEC: Animated sources): auto is WebP where accepted, else
        // GIF; JPEG, PNG and AVIF hold its first frame, as does frames=1. A video's preview
        // of N frames is an animation the same way.
        let moving = grid == nil && ((source.frames > 1 && !request.firstFrameOnly) || moments.count > 1)
        if request.format.isVideoPreview, !moving {
            throw AspectError(
                .badParam,
                "format=\(request.format.rawValue) makes a preview as a video: ask a video with frames=N (2 or more), or an animated GIF or WebP"
            )
        }
        // (`.source`, a dialect's "the source's own", is settled before a plan; unsettled,
        // it resolves as `auto` does without `Accept`.)
        // best is auto's choice as well: the picture is shaped for it, and it is the
        // answer where best is auto (SPEC: over output.bestMaxPixels, an explicit q, an animation).
        let choice: FormatChoice = request.format == .best ? .auto : request.format
        let resultHasAlpha = plan.hasAlpha(sourceHasAlpha: source.hasAlpha)
        let format: ImageFormat =
            moving && choice == .auto
            ? (accept.map { AcceptHeader.accepts($0, "image/webp") } == true ? .webp : .gif)
            : choice.resolve(
                accept: accept, resultHasAlpha: resultHasAlpha, autoAvif: limits.autoAvif, autoJxl: limits.autoJxl)
        let animated = moving && (format == .webp || format == .gif || format.isVideo)
        // Save-Data without q: the format's Save-Data quality (SPEC: Efficiency).
        let quality =
            request.quality ?? request.formatQuality[format.rawValue]
            ?? (request.saveData ? limits.saveDataQuality[format.rawValue] : nil)
        if format.isVideo, plan.output.width < 2 || plan.output.height < 2 {
            throw AspectError(
                .badParam,
                "a preview as \(format.rawValue) of \(plan.output) is too small: a video's sides are 2 pixels at least")
        }
        // The whole result's pixels: a storyboard's sheet, not one tile.
        let outputPixels = grid.map { Int64($0.count) * plan.output.pixels() } ?? plan.output.pixels()
        let best =
            request.format == .best && !moving && quality == nil && request.maxBytes == nil && !request.saveData
                && outputPixels <= Int64(limits.bestMaxPixels)
            ? BestCandidates.candidates(
                accept: accept, resultHasAlpha: resultHasAlpha, limits: limits, fallback: format) : nil
        // q=auto for a still in a lossy format (an animation keeps the format's default);
        // best's candidates each at the quality its search finds.
        let auto =
            best != nil
                || request.searchesQuality(limits) && quality == nil && AutoQuality.formats.contains(format)
                    && !animated
            ? limits.autoQuality : nil
        var order = RenderOrder(
            plan: plan, format: format, quality: quality, animated: animated,
            moments: animated || grid != nil ? moments : Array(moments.prefix(1)), frameDelayMs: limits.previewFrameMs,
            maxBytes: request.maxBytes, autoQuality: auto)
        order.keepCopyright = request.keepCopyright
        order.best = best
        order.grid = grid
        return order
    }
}

/// What `/info` is made of: the header's facts and a small upright decode.
public struct SourceFacts: Equatable, Sendable, Codable {
    public var description: SourceDescription
    /// EXIF orientation, 1 … 8.
    public var orientation: Int
    /// Frames of an animated source; 1 for a still one.
    public var frames: Int
    /// Pages of a paged source (TIFF, HEIF, PDF); 1 for any other.
    public var pages: Int
    /// A video's stream facts; nil for any other source.
    public var video: VideoFacts?
    /// The source shrunk to fit 100×100, upright, sRGB, RGBA with 8 bits a channel.
    public var previewWidth: Int
    public var previewHeight: Int
    public var previewRGBA: [UInt8]
    /// The faces found, when they were looked for (SPEC: Faces); nil when not.
    public var faces: [FaceBox]?

    public init(
        description: SourceDescription, orientation: Int, frames: Int, pages: Int = 1, video: VideoFacts? = nil,
        previewWidth: Int, previewHeight: Int, previewRGBA: [UInt8]
    ) {
        self.description = description
        self.orientation = orientation
        self.frames = frames
        self.pages = pages
        self.video = video
        self.previewWidth = previewWidth
        self.previewHeight = previewHeight
        self.previewRGBA = previewRGBA
    }
}

/// What `/info` tells of a video's stream (SPEC: Video).
public struct VideoFacts: Equatable, Sendable, Codable {
    /// Seconds.
    public var duration: Double
    /// FFmpeg's short name of the codec: `h264`, `vp9`, `hevc`, `av1`, …
    public var codec: String
    /// Frames a second; 0 when the container does not say.
    public var fps: Double

    public init(duration: Double, codec: String, fps: Double) {
        self.duration = duration
        self.codec = codec
        self.fps = fps
    }
}
