import Core
import Foundation

/// Aspect's configuration: every key of SPEC, with its built-in default.
/// `Config+Loading.swift` layers the file, the environment and flags over these.
public struct Config: Equatable, Sendable {
    public struct Server: Equatable, Sendable {
        public var host = Defaults.Server.host
        public var port = Defaults.Server.port
        /// Threads doing image work; 0 means two per core.
        public var workers = 0
        /// Event-loop threads owning the sockets; 0 means one per core.
        public var eventLoops = 0
        public var queueDepth = Defaults.Server.queueDepth
        public var maxConnections = Defaults.Server.maxConnections
        public var minSendBytesPerSecond = Defaults.Server.minSendBytesPerSecond
        public var headerTimeoutMs = Defaults.Server.headerTimeoutMs
        public var idleTimeoutMs = Defaults.Server.idleTimeoutMs
        public var writeTimeoutMs = Defaults.Server.writeTimeoutMs
        public var drainTimeoutMs = Defaults.Server.drainTimeoutMs
        /// After an answer that closes, how long the client's further bytes are read and
        /// dropped before the close, so it gets the answer rather than a reset (nginx's
        /// lingering close; its lingering_timeout is 5 s too).
        public var lingerTimeoutMs = Defaults.Server.lingerTimeoutMs
        /// How long accepting stops when the process runs out of descriptors (nginx: 500 ms).
        public var acceptBackoffMs = Defaults.Server.acceptBackoffMs
        /// Where renders run (SPEC: Isolation).
        public var isolation = Isolation.process
        /// How hard a worker's sandbox must be (SPEC: Isolation).
        public var sandbox = SandboxMode.best
        /// Renders a worker makes before it is replaced (0: never).
        public var workerJobs = Defaults.Server.workerJobs
    }

    /// `server.sandbox`: every mechanism the kernel has (`best`), or refuse to start a
    /// worker without Landlock and seccomp (`strict`).
    public enum SandboxMode: String, Sendable, CaseIterable { case best, strict }

    /// `server.isolation`: renders in sandboxed worker processes, or in the service's own.
    public enum Isolation: String, Sendable, CaseIterable { case process, thread }

    public struct Images: Equatable, Sendable {
        /// The folder `src` is relative to (absolute once loaded).
        public var root = "samples"
        /// The source formats decoded, by libvips loader; every other loader is blocked in
        /// libvips at start-up. SVG and PDF are off unless listed until their sources are
        /// sanitised and bounded (issue 24); ImageMagick is never offered.
        public var formats = Defaults.formats
        /// JPEG shrink-on-load by the largest of 8, 4, 2 the scale allows (sharp's and
        /// imgproxy's default), rather than libvips' own rule, which leaves a factor of
        /// two for the final resize: faster, at a small cost in fidelity (BENCHMARKS.md).
        public var fastShrinkOnLoad = true
        /// How often the root's path is resolved again, so a folder renamed and replaced
        /// or a symlink flipped to a new folder is followed without a restart.
        public var rootCheckMs = 1_000
        /// A folder root's sources are watched with inotify, so a hit whose source has not
        /// changed needs no stat(2); off for file systems whose changes inotify does not
        /// see (NFS and other network file systems, changes made on another host).
        public var watchChanges = true
        /// imgproxy's fallback image: a path under the root, or the image itself as base64;
        /// empty: none (errors stay errors).
        public var fallback = ""
        /// The fallback's status: 200, or 0 for the error's own (imgproxy's _HTTP_CODE).
        public var fallbackStatus = 200
        public var fallbackMaxAgeSeconds = 60

        /// `fallback`'s image when it is data: base64 of a JPEG, PNG, GIF or WebP.
        public var fallbackData: [UInt8]? {
            guard fallback.count > 16, let data = Data(base64Encoded: fallback) else { return nil }
            let b = [UInt8](data)
            let magic: [[UInt8]] = [
                [0xFF, 0xD8, 0xFF], [0x89, 0x50, 0x4E, 0x47], Array("GIF8".utf8), Array("RIFF".utf8),
            ]
            return magic.contains { b.starts(with: $0) } ? b : nil
        }

        /// What names the rendering rules in the cache key: results made under other
        /// rules are other entries.
        public var renderingTag: String { fastShrinkOnLoad ? "shrink-on-load=fast" : "shrink-on-load=libvips" }

        /// Every format a loader of Debian's libvips can be named by here.
        public static let knownFormats = [
            "jpeg", "png", "webp", "gif", "heif", "tiff", "svg", "pdf", "jxl", "mp4", "webm", "mkv", "jp2k",
        ]
    }

    public struct Cache: Equatable, Sendable {
        /// `s3://BUCKET/PREFIX/`: a result tier shared by replicas, behind the local one.
        public var shared = ""
        /// Uploads to the shared tier that may wait; past it they are dropped.
        public var sharedQueue = 1000
        /// Where results are kept (absolute once loaded).
        public var dir = "cache"
        public var maxBytes: Int64 = 1 << 30
        /// Results kept open for hits, so a hit costs no open(2) or close(2).
        public var openFiles = 1000
        /// Held-open results up to this size are held in memory too, and sent with their
        /// head in one write (at most `openFiles` × this much memory).
        public var memoryFileBytes: Int64 = 32 << 10
        /// How often a cache folder that cannot be used (full, not writable) is tried again.
        public var recheckMs = Defaults.Cache.recheckMs
    }

    public struct HTTP: Equatable, Sendable {
        public var maxAgeSeconds = 31_536_000
        /// The demo page at `/`: on in the embedded default (config.json), off otherwise.
        public var demoPage = false
        /// `format=auto` may choose AVIF when `Accept` lists it (off: AVIF costs more to encode).
        public var autoAvif = false
        /// `format=auto` may choose JPEG XL (before AVIF) when `Accept` lists it.
        public var autoJxl = false
        /// Client hints stand in for `dpr` and `w` when they are not given.
        public var clientHints = false
        /// `Save-Data: on` without `q`: the quality of `saveDataQuality`, and `Vary: Save-Data`.
        public var saveData = false
        /// The quality a `Save-Data` request is encoded at, by output format.
        public var saveDataQuality = Defaults.saveDataQuality
    }

    public struct Limits: Equatable, Sendable {
        public var maxDimension = Defaults.Limits.maxDimension
        public var maxDpr = Defaults.Limits.maxDpr
        public var maxSourceBytes = Defaults.Limits.maxSourceBytes
        public var maxSourcePixels = Defaults.Limits.maxSourcePixels
        public var processingTimeoutMs = Defaults.Limits.processingTimeoutMs
        /// Most frames an animated source may have (GIF, WebP); more is a 413.
        public var maxAnimationFrames = Defaults.Limits.maxAnimationFrames
        /// Most elements an SVG source may have; more is a 413.
        public var maxSvgElements = Defaults.Limits.maxSvgElements
        /// Most seconds of video decoded forward from a keyframe to reach a wanted frame.
        public var maxVideoSeconds = Defaults.Limits.maxVideoSeconds
        /// The most tiles on a storyboard's sheet.
        public var maxTiles = Defaults.Limits.maxTiles
        /// A render worker's address-space limit (SPEC: Isolation).
        public var workerMemoryBytes = Defaults.Limits.workerMemoryBytes
        /// How long a source that killed a render worker is refused without a try.
        public var poisonSeconds = Defaults.Limits.poisonSeconds
        /// The largest result a render worker may hand back (SPEC: Isolation).
        public var maxResultBytes = Defaults.Limits.maxResultBytes
    }

    /// What an output carries (SPEC: Colour and metadata).
    public struct Output: Equatable, Sendable {
        /// Keep the source's copyright and artist fields, and no other metadata.
        public var keepCopyright = false
        /// `auto`: `q=auto` when a request names no quality.
        public var quality = QualityDefault.format
        public var autoQualityMin = 30
        public var autoQualityMax = 90
        public var autoQualitySSIM = 0.985
        /// The format of a request that names none.
        public var format = FormatDefault.auto
        /// The lossy formats `format=best` weighs, where `Accept` takes them.
        public var bestFormats = Defaults.Output.bestFormats
        /// Past this many output pixels, `best` is `auto`.
        public var bestMaxPixels = Defaults.Output.bestMaxPixels
        /// libvips' AVIF effort, 0 fastest … 9.
        public var avifEffort = Defaults.Output.avifEffort
    }

    /// What format a request without `format` gets (SPEC: Efficiency).
    public enum FormatDefault: String, Sendable, CaseIterable {
        case auto, best
    }

    /// What quality a request without `q` gets: the format's, or the searched one.
    public enum QualityDefault: String, Sendable, CaseIterable {
        case format, auto
    }

    /// Video sources (SPEC: Video).
    public struct Video: Equatable, Sendable {
        /// The moment shown when `t` is not given (a clip shorter than twice it: its middle).
        public var defaultSeconds = Defaults.Video.defaultSeconds
        /// How long each frame of a `frames=N` preview is shown.
        public var previewFrameMs = Defaults.Video.previewFrameMs
    }

    /// `gravity=face` (SPEC: Faces).
    public struct Faces: Equatable, Sendable {
        /// Where the first look finds no face, a second on a copy twice as large, so faces
        /// about 40 pixels high on the 640-pixel copy are found (BENCHMARKS.md: its cost).
        public var upsample = true
    }

    public struct Security: Equatable, Sendable {
        /// When non-empty, every `/thumb` request needs a valid `sig`.
        public var signingKey = ""
        /// Only `preset=` requests (with `src`, `dpr`, `format`, `sig`) are served.
        public var onlyPresets = false
        /// The bearer token of `POST /purge`; empty: the route is a 404.
        public var adminToken = ""
    }

    /// Fetching from an HTTP origin or an S3 bucket (SPEC: Sources).
    public struct Sources: Equatable, Sendable {
        /// Fetches in flight at once; more wait, up to `queueDepth`.
        public var concurrency = 16
        public var queueDepth = 1000
        public var connectTimeoutMs = 3_000
        /// The whole fetch, head and body (imgproxy: 5 s; thumbor: 20 s).
        public var timeoutMs = 10_000
        /// Redirects followed, to the same scheme and host only.
        public var maxRedirects = 3
        /// A PEM file of CA certificates trusted besides the system's.
        public var caFile = ""
        /// Downloaded sources kept on disk, under `cache.dir`/sources.
        public var cacheMaxBytes: Int64 = 1 << 30
        /// How long a downloaded source is trusted before a conditional request checks it.
        public var revalidateSeconds = 60
        /// How long past `revalidateSeconds` a kept source is still served while its
        /// re-check runs in the background or has failed (stale while revalidate).
        public var staleSeconds = 300
    }

    /// An S3-compatible bucket's endpoint and credentials; each falls back to the AWS
    /// variable every S3 tool reads.
    public struct S3: Equatable, Sendable {
        /// Empty: AWS's regional endpoint. Set it for MinIO, Ceph, R2 and the like.
        public var endpoint = ""
        /// Empty: us-east-1.
        public var region = ""
        /// Bucket in the path (`endpoint/bucket/key`) rather than the host name.
        public var pathStyle = false
        public var accessKeyId = ""
        public var secretAccessKey = ""
        public var sessionToken = ""

        /// The AWS variable each key falls back to.
        public static let awsVariables: [(key: String, variable: String)] = [
            ("s3.endpoint", "AWS_ENDPOINT_URL"), ("s3.region", "AWS_REGION"), ("s3.region", "AWS_DEFAULT_REGION"),
            ("s3.accessKeyId", "AWS_ACCESS_KEY_ID"), ("s3.secretAccessKey", "AWS_SECRET_ACCESS_KEY"),
            ("s3.sessionToken", "AWS_SESSION_TOKEN"),
        ]
    }

    public enum LogFormat: String, Sendable, CaseIterable { case text, json }
    public enum LogLevel: String, Sendable, CaseIterable, Comparable {
        case debug, info, warn, error

        private var rank: Int {
            switch self {
            case .debug: 0
            case .info: 1
            case .warn: 2
            case .error: 3
            }
        }

        public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rank < b.rank }
    }

    public struct Log: Equatable, Sendable {
        public var format = LogFormat.text
        public var level = LogLevel.info
        /// One line per request on stdout.
        public var access = true
    }

    public var server = Server()
    public var images = Images()
    public var cache = Cache()
    public var http = HTTP()
    public var limits = Limits()
    public var video = Video()
    public var faces = Faces()
    public var output = Output()
    public var security = Security()
    public var log = Log()
    public var sources = Sources()
    /// Named parameter sets, as configured.
    public internal(set) var presets: [String: String] = [:]
    /// `presets`, each checked and parsed as a request would be: the one parse, made by
    /// `load` (which refuses a bad one) or `setPresets`.
    public internal(set) var parsedPresets = Presets()
    /// Named watermarks (SPEC: Watermarks); their images are read by `aspect serve` and
    /// `aspect thumb` at start-up, which sets each one's size and digest.
    public var watermarks: [String: Watermark] = [:]
    public var s3 = S3()
    public var imgproxy = Imgproxy()
    public var thumbor = Thumbor()

    /// imgproxy's URL format (SPEC: imgproxy URLs).
    public struct Imgproxy: Equatable, Sendable {
        public var enabled = false
        /// Hex, as `IMGPROXY_KEY` and `IMGPROXY_SALT`.
        public var key = ""
        public var salt = ""
        public var signatureSize = 32
        /// Names to options in the dialect's syntax.
        public var presets: [String: String] = [:]

        /// The imgproxy variable each key falls back to.
        public static let variables: [(key: String, variable: String)] = [
            ("imgproxy.key", "IMGPROXY_KEY"), ("imgproxy.salt", "IMGPROXY_SALT"),
            ("imgproxy.signatureSize", "IMGPROXY_SIGNATURE_SIZE"),
            ("images.fallback", "IMGPROXY_FALLBACK_IMAGE_DATA"),
            ("images.fallbackStatus", "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE"),
            ("images.fallbackMaxAgeSeconds", "IMGPROXY_FALLBACK_IMAGE_TTL"),
        ]
    }

    /// thumbor's URL format (SPEC: thumbor URLs).
    public struct Thumbor: Equatable, Sendable {
        public var enabled = false
        /// thumbor's `SECURITY_KEY`: the HMAC-SHA1 key of its signatures.
        public var securityKey = ""
        /// thumbor's `ALLOW_UNSAFE_URL`; nil: allowed while no key is set (`thumborUnsafeAllowed`).
        public var allowUnsafe: Bool?

        /// The thumbor variable each key falls back to.
        public static let variables: [(key: String, variable: String)] = [
            ("thumbor.securityKey", "THUMBOR_SECURITY_KEY")
        ]
    }

    public init() {}

    /// Whether `/unsafe/…` thumbor URLs are answered: as `thumbor.allowUnsafe` says, else
    /// while neither a thumbor key nor `security.signingKey` is set (a server that signs
    /// its native URLs is not opened by an unsigned dialect).
    public var thumborUnsafeAllowed: Bool {
        thumbor.allowUnsafe ?? (thumbor.securityKey.isEmpty && security.signingKey.isEmpty)
    }

    /// Sets the presets, each checked against this configuration's limits; a bad one is an
    /// error naming it, and nothing changes.
    public mutating func setPresets(_ texts: [String: String]) throws(ConfigError) {
        parsedPresets = try Presets(texts, limits: requestLimits)
        presets = texts
    }

    /// The limits a request is parsed and planned against.
    public var requestLimits: RequestLimits {
        RequestLimits(
            maxDimension: limits.maxDimension, maxDpr: limits.maxDpr, autoAvif: http.autoAvif, autoJxl: http.autoJxl,
            maxAnimationFrames: limits.maxAnimationFrames, videoDefaultSeconds: video.defaultSeconds,
            previewFrameMs: video.previewFrameMs, saveDataQuality: http.saveDataQuality, watermarks: watermarks,
            autoQuality: AutoQuality(
                min: output.autoQualityMin, max: output.autoQualityMax, ssim: output.autoQualitySSIM),
            autoQualityByDefault: output.quality == .auto, defaultFormat: output.format == .best ? .best : .auto,
            bestFormats: output.bestFormats, bestMaxPixels: output.bestMaxPixels, maxTiles: limits.maxTiles)
    }

    /// Whether `sig` is required.
    public var signingEnabled: Bool { !security.signingKey.isEmpty }
}
