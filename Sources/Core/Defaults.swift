/// Every default the service's settings start from, in one place: the configuration's
/// keys, the limits a request is parsed and planned against, the imaging limits and the
/// HTTP server's own settings all read them here.
public enum Defaults {
    /// `server.*`.
    public enum Server {
        public static let host = "127.0.0.1"
        public static let port = 8080
        public static let queueDepth = 64
        public static let maxConnections = 1024
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
        public static let maxDpr: Double = 4
        public static let maxSourceBytes: Int64 = 50 << 20
        public static let maxSourcePixels: Int64 = 50_000_000
        public static let processingTimeoutMs = 10_000
        public static let maxAnimationFrames = 100
        public static let maxSvgElements = 10_000
        public static let maxVideoSeconds: Double = 30
        public static let workerMemoryBytes: Int64 = 2 << 30
        public static let poisonSeconds = 300
    }

    /// `cache.*`.
    public enum Cache {
        /// How often a cache folder that cannot be used (full, not writable) is tried again.
        public static let recheckMs = 10_000
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
