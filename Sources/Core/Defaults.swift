/// Every default the service's settings start from, in one place: the configuration's
/// keys, the limits a request is parsed and planned against, the imaging limits and the
/// HTTP server's own settings all read them here.
public enum Defaults {
    /// `server.*`.
    public enum Server {
        public static let host = "127.0.0.1"
        public static let port = 8080
        public static let queueDepth = 64
        /// 0: sized at start from the descriptor limit (`aspect serve` says the figure).
        public static let maxConnections = 0
        /// Renders a worker makes before a fresh one replaces it (BENCHMARKS.md: the cost
        /// of 1, 10, 100 and never): a worker taken over keeps it for that many at most.
        public static let workerJobs = 100
        /// 1 KiB/s (8 kbit/s): under a quarter of the slowest real mobile link (GPRS carries
        /// 20-40 kbit/s), a hundred times a slow-read attack's trickle (slowhttptest's
        /// default 32 bytes every 3 s is 11 B/s).
        public static let minSendBytesPerSecond = 1024
        /// The rate is judged only after an answer has been going this long.
        public static let sendGraceMs = 5_000
        public static let headerTimeoutMs = 10_000
        public static let idleTimeoutMs = 60_000
        public static let writeTimeoutMs = 30_000
        public static let drainTimeoutMs = 10_000
        /// nginx's lingering_timeout is 5 s too.
        public static let lingerTimeoutMs = 5_000
        /// nginx's pause on running out of descriptors is 500 ms too.
        public static let acceptBackoffMs = 500
    }

    /// `limits.*`.
    public enum Limits {
        public static let maxDimension = 4096
        /// The most tiles on a storyboard's sheet (SPEC: Video).
        public static let maxTiles = 100
        public static let maxDpr: Double = 4
        public static let maxSourceBytes: Int64 = 50 << 20
        public static let maxSourcePixels: Int64 = 50_000_000
        public static let processingTimeoutMs = 10_000
        public static let maxAnimationFrames = 100
        public static let maxSvgElements = 10_000
        public static let maxVideoSeconds: Double = 30
        public static let workerMemoryBytes: Int64 = 2 << 30
        public static let poisonSeconds = 300
        public static let maxResultBytes: Int64 = 64 << 20
    }

    /// `cache.*`.
    public enum Cache {
        /// How often a cache folder that cannot be used (full, not writable) is tried again.
        public static let recheckMs = 10_000
    }

    /// `output.*`.
    public enum Output {
        /// The lossy formats `format=best` weighs (SPEC: Efficiency).
        public static let bestFormats: [ImageFormat] = [.avif, .webp, .jxl, .jpeg]
        /// Past this many output pixels `best` is `auto`: every candidate is a search of
        /// its own, and a large result's encodes cost the most.
        public static let bestMaxPixels = 2_000_000
        /// libvips' AVIF effort (0 fastest … 9; aom's speed is 9 − effort): 1, aom's speed 8.
        /// libvips' own 4 takes about 23× as long for about 12% fewer bytes at one quality
        /// (BENCHMARKS.md, issue 54, which also says which peer chose the same).
        public static let avifEffort = 1
    }

    /// `video.*`.
    public enum Video {
        public static let defaultSeconds: Double = 1
        public static let previewFrameMs = 500
    }

    /// `images.formats`: the source formats decoded, by libvips loader (ImageMagick never).
    public static let formats = [
        "jpeg", "png", "webp", "gif", "heif", "tiff", "jxl", "svg", "pdf", "mp4", "webm", "mkv",
    ]

    /// `http.saveDataQuality`: the quality a `Save-Data` request is encoded at, by format.
    public static let saveDataQuality = ["jpeg": 50, "webp": 50, "avif": 35, "jxl": 50]
}
