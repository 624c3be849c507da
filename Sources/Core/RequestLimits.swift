/// The limits a request and its plan are held to (from `limits.*` in the configuration).
public struct RequestLimits: Equatable, Sendable {
    /// Largest output side, in device pixels, after `dpr`.
    public var maxDimension: Int
    /// Largest `dpr`.
    public var maxDpr: Double
    /// `http.autoAvif`: `format=auto` may choose AVIF for a client that lists it.
    public var autoAvif: Bool
    /// `http.autoJxl`: `format=auto` may choose JPEG XL (before AVIF) for a client that lists it.
    public var autoJxl: Bool
    /// `limits.maxAnimationFrames`: the most frames a video's preview may ask for.
    public var maxAnimationFrames: Int
    /// `video.defaultSeconds`: the moment shown when `t` is not given.
    public var videoDefaultSeconds: Double
    /// `video.previewFrameMs`: how long each frame of a video's preview is shown.
    public var previewFrameMs: Int
    /// `http.saveDataQuality`: a `Save-Data` request's quality, by format name.
    public var saveDataQuality: [String: Int]
    /// `output.autoQuality*`: how `q=auto` searches.
    public var autoQuality: AutoQuality
    /// `output.quality=auto`: `q=auto` when a request names no quality.
    public var autoQualityByDefault: Bool
    /// `watermarks`: the configured ones by name, with their images' sizes once read.
    public var watermarks: [String: Watermark]
    /// `limits.maxTiles`: the most tiles a storyboard's sheet may have.
    public var maxTiles: Int
    /// `output.format`: the format of a request that names none (`auto` or `best`).
    public var defaultFormat: FormatChoice
    /// `output.bestFormats`: the lossy formats `format=best` weighs, where `Accept` takes them.
    public var bestFormats: [ImageFormat]
    /// `output.bestMaxPixels`: past this many output pixels, `best` is `auto`.
    public var bestMaxPixels: Int

    public init(
        maxDimension: Int = Defaults.Limits.maxDimension, maxDpr: Double = Defaults.Limits.maxDpr,
        autoAvif: Bool = false, autoJxl: Bool = false, maxAnimationFrames: Int = Defaults.Limits.maxAnimationFrames,
        videoDefaultSeconds: Double = Defaults.Video.defaultSeconds,
        previewFrameMs: Int = Defaults.Video.previewFrameMs, saveDataQuality: [String: Int] = Defaults.saveDataQuality,
        watermarks: [String: Watermark] = [:], autoQuality: AutoQuality = AutoQuality(),
        autoQualityByDefault: Bool = false, defaultFormat: FormatChoice = .auto,
        bestFormats: [ImageFormat] = Defaults.Output.bestFormats, bestMaxPixels: Int = Defaults.Output.bestMaxPixels,
        maxTiles: Int = Defaults.Limits.maxTiles
    ) {
        self.maxDimension = maxDimension
        self.maxDpr = maxDpr
        self.autoAvif = autoAvif
        self.autoJxl = autoJxl
        self.maxAnimationFrames = maxAnimationFrames
        self.videoDefaultSeconds = videoDefaultSeconds
        self.previewFrameMs = previewFrameMs
        self.saveDataQuality = saveDataQuality
        self.watermarks = watermarks
        self.autoQuality = autoQuality
        self.autoQualityByDefault = autoQualityByDefault
        self.defaultFormat = defaultFormat
        self.bestFormats = bestFormats
        self.bestMaxPixels = bestMaxPixels
        self.maxTiles = maxTiles
    }
}
