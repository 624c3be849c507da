import Core

/// What the header of a source says, read before any pixel is decoded.
public struct SourceInfo: Equatable, Sendable {
    /// The size after EXIF orientation: what the geometry plans on.
    public var size: Size
    /// The size as stored in the file.
    public var storedSize: Size
    /// The EXIF orientation, 1 … 8 (1 when absent).
    public var orientation: Int
    public var hasAlpha: Bool
    /// The format libvips' loader reads it as: `jpeg`, `png`, `webp`, `gif`, `heif`, `tiff`, …
    public var format: String
    public var bytes: Int64
    /// What its embedded ICC profile says of its colours.
    public var profile = ICCProfile.Kind.none
    /// The embedded profile, kept for the result (`profile=keep`, an RGB source's other
    /// than sRGB): its pixels are then not converted.
    var keptProfile: [UInt8]?
    /// The HEIF's embedded thumbnail is what is decoded (`thumbnail=embedded`).
    var embeddedThumbnail = false
    /// Frames of an animated source (GIF, WebP); 1 for a still one.
    public var frames = 1
    /// Pages of a paged source (TIFF, HEIF, PDF); 1 for any other.
    public var pages = 1
    /// The page read, from 1: the one asked for when the source has it, else 1.
    public var page = 1
    /// PQ or HLG coding (nclx, cICP), tone-mapped to SDR after the resize.
    var hdr: HDRCoding?
    /// A video's stream facts; nil for an image.
    public var video: VideoFacts?
    /// The moment of a video a still is made of, once the plan has said.
    var moment: Double?
    /// `trim`: the window of the upright source kept (`size` is then its size), and the
    /// whole upright source it was cut from.
    public var trim: Rect?
    /// imgproxy's `auto_rotate:0`: decoded as stored, EXIF orientation not applied.
    var noRotate = false
    /// A PNG's alpha flattened onto this colour as it is decoded, before the resize: set
    /// by a render whose result is flattened anyway and that nothing between would tell
    /// apart (`Thumbnailer.flattensFirst`).
    var flattenFirst: Color?
    var untrimmed: Size?

    /// What the planner is told.
    public var description: SourceDescription {
        var d = SourceDescription(
            size: size, hasAlpha: hasAlpha, format: format, bytes: bytes, frames: frames, pages: pages,
            duration: video?.duration)
        (d.trim, d.untrimmed) = (trim, untrimmed)
        return d
    }
}

/// The limits checked from the header, before any decode.
public struct ImagingLimits: Equatable, Sendable, Codable {
    public var maxSourceBytes: Int64
    public var maxSourcePixels: Int64
    /// The source formats that may be loaded (by `SourceInfo.format`).
    public var formats: Set<String>
    /// The longest time for one job (`limits.processingTimeoutMs`); 0 for no limit.
    public var processingTimeoutMs: Int
    /// JPEG shrink-on-load by the largest factor the scale allows (`images.fastShrinkOnLoad`).
    public var fastShrinkOnLoad: Bool
    /// Most frames of an animated source (`limits.maxAnimationFrames`).
    public var maxAnimationFrames = Defaults.Limits.maxAnimationFrames
    /// Most elements of an SVG source (`limits.maxSvgElements`).
    public var maxSvgElements = Defaults.Limits.maxSvgElements
    /// Most seconds of video decoded from a keyframe to a wanted frame (`limits.maxVideoSeconds`).
    public var maxVideoSeconds = Defaults.Limits.maxVideoSeconds
    /// The moment of a video `/info` describes (`video.defaultSeconds`, SPEC: Video).
    public var videoDefaultSeconds = Defaults.Video.defaultSeconds
    /// `output.keepCopyright`: EXIF Copyright and Artist, XMP dc:rights and dc:creator kept.
    public var keepCopyright = false
    /// `faces.upsample`: a second look for faces on a copy twice as large where the first
    /// finds none.
    public var faceUpsample = true
    /// `output.avifEffort`: libvips' AVIF effort, 0 fastest … 9.
    public var avifEffort = Defaults.Output.avifEffort

    /// The formats served unless configured otherwise: `images.formats`' default.
    public static let defaultFormats = Set(Defaults.formats)

    /// The service's defaults, but `processingTimeoutMs` 0 (no limit) for a caller that
    /// sets none: the service always sets `limits.processingTimeoutMs`.
    public init(
        maxSourceBytes: Int64 = Defaults.Limits.maxSourceBytes,
        maxSourcePixels: Int64 = Defaults.Limits.maxSourcePixels,
        formats: Set<String> = defaultFormats, processingTimeoutMs: Int = 0, fastShrinkOnLoad: Bool = true,
        maxAnimationFrames: Int = Defaults.Limits.maxAnimationFrames
    ) {
        self.maxAnimationFrames = maxAnimationFrames
        self.processingTimeoutMs = processingTimeoutMs
        self.fastShrinkOnLoad = fastShrinkOnLoad
        self.maxSourceBytes = maxSourceBytes
        self.maxSourcePixels = maxSourcePixels
        self.formats = formats
    }

}

/// libvips' loader class names, by the format they read.
enum LoaderName {
    /// The formats whose pages are pages, not an animation's frames.
    static let pagedFormats: Set<String> = ["tiff", "heif", "pdf"]

    /// The loader classes (with their file, buffer and source subclasses) that read
    /// `format` in Debian's libvips 8.14: what `Vips.restrictLoaders` leaves unblocked.
    static func classes(of format: String) -> [String] {
        switch format {
        case "jpeg": ["VipsForeignLoadJpeg"]
        case "png": ["VipsForeignLoadPng"]
        case "webp": ["VipsForeignLoadWebp"]
        case "gif": ["VipsForeignLoadNsgif"]
        case "heif": ["VipsForeignLoadHeif"]
        case "tiff": ["VipsForeignLoadTiff"]
        case "svg": ["VipsForeignLoadSvg"]
        case "pdf": ["VipsForeignLoadPdf"]
        case "jxl": ["VipsForeignLoadJxl"]
        case "jp2k": ["VipsForeignLoadJp2k"]
        default: []
        }
    }

    /// `VipsForeignLoadJpegFile` → `jpeg`; an unknown loader → its lower-cased stem.
    static func format(of loader: String) -> String {
        var stem = Substring(loader)
        if stem.hasPrefix("VipsForeignLoad") { stem = stem.dropFirst("VipsForeignLoad".count) }
        for suffix in ["File", "Buffer", "Source"] where stem.hasSuffix(suffix) {
            stem = stem.dropLast(suffix.count)
        }
        switch stem.lowercased() {
        case "jpeg": return "jpeg"
        case "png", "spng": return "png"
        case "webp": return "webp"
        case "gif", "nsgif": return "gif"
        case "heif": return "heif"
        case "tiff": return "tiff"
        case let other: return other
        }
    }
}
