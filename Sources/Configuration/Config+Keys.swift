import Core
import Foundation

extension Config {
    /// Every key of the configuration, in the order docs/configuration.md's table lists them (a doc test holds it).
    public static let keys: [ConfigKey] = [
        .string("server.host", "address to listen on", allowEmpty: false, \.server.host),
        .integer("server.port", 0...65535, "TCP port to listen on (0: any free port, printed at start)", \.server.port),
        .integer("server.workers", 0...256, "threads doing image work (0: two per core)", \.server.workers),
        .integer(
            "server.eventLoops", 0...64, "event-loop threads owning the sockets (0: one per core)",
            \.server.eventLoops),
        .integer(
            "server.queueDepth", 1...100_000, "image jobs that may wait before a request gets 503", \.server.queueDepth),
        .integer(
            "server.maxConnections", 0...1_000_000,
            "open connections; when full, one that can be spared is closed for a newcomer, else 503 (0: from the descriptor limit)",
            \.server.maxConnections),
        .integer(
            "server.minSendBytesPerSecond", 0...1_000_000_000,
            "an answer read slower than this over 5 s (from 5 s in) is cut (0: no floor)",
            \.server.minSendBytesPerSecond),
        .integer(
            "server.headerTimeoutMs", 100...600_000, "time a client has to send its request head, in ms",
            \.server.headerTimeoutMs),
        .integer(
            "server.idleTimeoutMs", 100...3_600_000, "time an idle keep-alive connection stays open, in ms",
            \.server.idleTimeoutMs),
        .integer(
            "server.writeTimeoutMs", 100...3_600_000, "time a client may take to read more of a response, in ms",
            \.server.writeTimeoutMs),
        .integer(
            "server.drainTimeoutMs", 0...3_600_000, "time in-flight requests have to finish after SIGTERM, in ms",
            \.server.drainTimeoutMs),
        .integer(
            "server.lingerTimeoutMs", 0...600_000,
            "after an answer that closes, time the client's further bytes are read and dropped, in ms",
            \.server.lingerTimeoutMs),
        .integer(
            "server.acceptBackoffMs", 1...60_000, "time accepting stops when descriptors run out, in ms",
            \.server.acceptBackoffMs),
        .choice(
            "server.isolation", "where renders run: sandboxed worker processes, or threads of the service",
            \.server.isolation),
        .choice(
            "server.sandbox",
            "best: every mechanism the kernel has, said at start; strict: a worker without Landlock and seccomp does not start",
            \.server.sandbox),
        .integer(
            "server.workerJobs", 0...1_000_000,
            "renders a worker makes before a fresh one takes its place (0: never; 1: one process a render)",
            \.server.workerJobs),
        ConfigKey(
            "images.root", "where src is looked up: a folder, an http(s):// base URL or s3://BUCKET/PREFIX/",
            isPath: true
        ) { c, v, base in
            guard case .string(let s) = v, !s.isEmpty, !s.utf8.contains(0) else { return "must be a non-empty string" }
            if s.contains("://") {
                do throws(ConfigError) {
                    _ = try SourceRoot(s)
                } catch {
                    return error.message
                }
                c.images.root = s
            } else {
                c.images.root = ConfigPaths.resolve(s, against: base)
            }
            return nil
        } read: {
            $0.images.root
        },
        ConfigKey("images.formats", "source formats decoded: a list, or names joined by commas") { c, v, _ in
            let names = v.names
            guard let names, !names.isEmpty, names.allSatisfy(Config.Images.knownFormats.contains) else {
                return "must list formats among \(Config.Images.knownFormats.joined(separator: ", "))"
            }
            c.images.formats = names
            return nil
        } read: {
            $0.images.formats.joined(separator: ",")
        },
        .boolean(
            "images.fastShrinkOnLoad",
            "JPEG shrink-on-load as far as the scale allows (faster); false: libvips' rule, a little closer to a full decode",
            \.images.fastShrinkOnLoad),
        .integer(
            "images.rootCheckMs", 0...3_600_000,
            "how often the root's path is looked up again, to follow a swapped folder or symlink, in ms",
            \.images.rootCheckMs),
        .boolean(
            "images.watchChanges",
            "a folder root's hits learn of changed sources from inotify, not a stat(2) each; false: stat every hit (network file systems)",
            \.images.watchChanges),
        ConfigKey(
            "images.fallback",
            "an image shown in place of a missing or undecodable source: a path under images.root, or base64 data (else IMGPROXY_FALLBACK_IMAGE_DATA)"
        ) { c, v, _ in
            guard case .string(let t) = v, !t.utf8.contains(0), t.utf8.count <= 16 << 20 else {
                return "must be a string"
            }
            c.images.fallback = t
            if c.images.fallbackData == nil, !t.isEmpty {
                if t.hasPrefix("/") || t.split(separator: "/").contains("..") {
                    return
                        "must be a path under images.root (no leading /, no ..) or base64 of a JPEG, PNG, GIF or WebP"
                }
            }
            return nil
        } read: {
            $0.images.fallbackData != nil ? "(data, \($0.images.fallbackData?.count ?? 0) bytes)" : $0.images.fallback
        },
        .integer(
            "images.fallbackStatus", 0...599,
            "the fallback's status (0: the error's own; else IMGPROXY_FALLBACK_IMAGE_HTTP_CODE)",
            \.images.fallbackStatus),
        .integer(
            "images.fallbackMaxAgeSeconds", 0...31_536_000,
            "the fallback's Cache-Control max-age (else IMGPROXY_FALLBACK_IMAGE_TTL)",
            \.images.fallbackMaxAgeSeconds),
        .string("cache.dir", "the folder results are kept in", allowEmpty: false, isPath: true, \.cache.dir),
        .bytes("cache.maxBytes", 0...(1 << 50), "the most the cache may hold (0: cache off)", \.cache.maxBytes),
        .integer(
            "cache.openFiles", 0...100_000, "cached results kept open for hits (0: opened per hit)",
            \.cache.openFiles),
        .bytes(
            "cache.memoryFileBytes", 0...(16 << 20),
            "held-open results up to this size are kept in memory and sent in one write with their head (0: never)",
            \.cache.memoryFileBytes),
        .integer(
            "cache.recheckMs", 100...3_600_000, "how often a cache folder that cannot be used is tried again, in ms",
            \.cache.recheckMs),
        ConfigKey(
            "cache.shared", "s3://BUCKET/PREFIX/: a result tier shared by replicas, with the s3.* keys (empty: none)"
        ) {
            c, v, _ in
            guard case .string(let s) = v else { return "must be a string" }
            guard s.isEmpty || { if case .s3? = try? SourceRoot(s) { return true } else { return false } }() else {
                return "must be empty or s3://BUCKET/PREFIX/"
            }
            c.cache.shared = s
            return nil
        } read: {
            $0.cache.shared
        },
        .integer(
            "cache.sharedQueue", 1...1_000_000, "uploads to the shared tier that may wait (more are dropped)",
            \.cache.sharedQueue),
        .integer(
            "http.maxAgeSeconds", 0...1_000_000_000, "Cache-Control max-age of results, in seconds",
            \.http.maxAgeSeconds),
        .boolean("http.demoPage", "the demo page at / (sample images in every mode, a URL builder)", \.http.demoPage),
        .boolean(
            "http.autoAvif", "format=auto may choose AVIF for clients that accept it (AVIF costs more to encode)",
            \.http.autoAvif),
        .boolean(
            "http.autoJxl", "format=auto may choose JPEG XL, before AVIF, for clients that accept it", \.http.autoJxl),
        .boolean(
            "http.clientHints",
            "Sec-CH-DPR (or DPR) stands in for an absent dpr, Sec-CH-Width (or Width) for absent w and h; "
                + "image answers carry Accept-CH and vary on the hints",
            \.http.clientHints),
        .boolean(
            "http.saveData",
            "a request with Save-Data: on and no q is encoded at http.saveDataQuality; image answers vary on Save-Data",
            \.http.saveData),
        ConfigKey(
            "http.saveDataQuality",
            "the quality of a Save-Data request, by format: a JSON object of jpeg, webp, avif, jxl"
        ) { c, v, _ in
            guard let object = v.jsonObject else {
                return "must be a JSON object of formats (jpeg, webp, avif, jxl) to qualities 1 to 100"
            }
            for (name, value) in object {
                guard ["jpeg", "webp", "avif", "jxl"].contains(name), case .integer(let q) = value,
                    (1...100).contains(q)
                else { return "must map jpeg, webp, avif or jxl to a quality from 1 to 100; '\(name)' does not" }
                c.http.saveDataQuality[name] = Int(q)
            }
            return nil
        } read: {
            "{"
                + $0.http.saveDataQuality.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(
                    separator: ", ") + "}"
        },
        .integer(
            "limits.maxDimension", 1...65_535, "largest output side, in pixels, dpr included", \.limits.maxDimension),
        .decimal("limits.maxDpr", 1...10, "largest dpr", \.limits.maxDpr),
        .bytes("limits.maxSourceBytes", 1...(1 << 40), "largest source file", \.limits.maxSourceBytes),
        .bytes("limits.maxSourcePixels", 1...(1 << 40), "largest source, width × height", \.limits.maxSourcePixels),
        .integer(
            "limits.processingTimeoutMs", 10...3_600_000, "longest time for one image job, in ms",
            \.limits.processingTimeoutMs),
        .bytes(
            "limits.workerMemoryBytes", (64 << 20)...(1 << 40), "a render worker's address-space limit",
            \.limits.workerMemoryBytes),
        .bytes(
            "limits.maxResultBytes", (1 << 20)...(1 << 32), "the largest result a render worker may hand back",
            \.limits.maxResultBytes),
        .integer(
            "limits.poisonSeconds", 0...86_400, "how long a source that killed a render worker is refused, in seconds",
            \.limits.poisonSeconds),
        .integer(
            "limits.maxAnimationFrames", 1...100_000,
            "most frames an animated source may have; its frames together count against limits.maxSourcePixels",
            \.limits.maxAnimationFrames),
        .integer(
            "limits.maxSvgElements", 1...10_000_000,
            "most elements an SVG source may have (more: 413), counted before it is sanitised",
            \.limits.maxSvgElements),
        .decimal(
            "limits.maxVideoSeconds", 0.1...3600,
            "most seconds of video decoded forward from a keyframe to reach a wanted frame (more: 413)",
            \.limits.maxVideoSeconds),
        .integer(
            "limits.maxTiles", 1...400, "the most tiles on a storyboard's sheet (tiles=COLSxROWS, each side 1 to 20)",
            \.limits.maxTiles),
        .boolean(
            "output.keepCopyright",
            "keep the source's EXIF Copyright and Artist and XMP dc:rights and dc:creator, and no other metadata",
            \.output.keepCopyright),
        .choice(
            "output.quality", "the quality without q: format (each format's default) or auto (q=auto)",
            \.output.quality),
        .integer("output.autoQualityMin", 1...100, "the lowest quality q=auto may choose", \.output.autoQualityMin),
        .integer("output.autoQualityMax", 1...100, "the highest quality q=auto may choose", \.output.autoQualityMax),
        .decimal(
            "output.autoQualitySSIM", 0.5...1, "the SSIM of luma q=auto keeps against the unencoded result",
            \.output.autoQualitySSIM),
        .choice(
            "output.format", "the format of a request that names none: auto (by Accept) or best (the smallest)",
            \.output.format),
        ConfigKey(
            "output.bestFormats",
            "the lossy formats format=best weighs where Accept takes them: a list, or names joined by commas"
        ) { c, v, _ in
            let names = v.names
            let formats = names?.compactMap { ImageFormat(rawValue: $0) }.filter { AutoQuality.formats.contains($0) }
            guard let names, let formats, !formats.isEmpty, formats.count == names.count else {
                return "must list formats among avif, webp, jxl, jpeg"
            }
            c.output.bestFormats = formats
            return nil
        } read: {
            $0.output.bestFormats.map(\.rawValue).joined(separator: ",")
        },
        .integer(
            "output.avifEffort", 0...9,
            "libvips' AVIF effort: 0 fastest, 9 smallest (1 is imgproxy's speed 8; libvips' own default, 4, takes about 23× as long)",
            \.output.avifEffort),
        .integer(
            "output.bestMaxPixels", 1...100_000_000, "past this many output pixels, format=best is format=auto",
            \.output.bestMaxPixels),
        .boolean(
            "faces.upsample",
            "where gravity=face finds no face on the 640-pixel copy, look again on one twice as large (faces down to about 40 px)",
            \.faces.upsample),
        .decimal(
            "video.defaultSeconds", 0...3600,
            "the moment of a video shown when t is not given (a shorter clip: its middle frame)",
            \.video.defaultSeconds),
        .integer(
            "video.previewFrameMs", 10...60_000, "how long each frame of a frames=N video preview is shown, in ms",
            \.video.previewFrameMs),
        ConfigKey("security.signingKey", "HMAC key; when set, every /thumb needs sig (at least 16 characters)") {
            c, v, _ in
            guard case .string(let s) = v, s.isEmpty || s.utf8.count >= 16 else {
                return "must be empty (signing off) or a string of at least 16 characters"
            }
            c.security.signingKey = s
            return nil
        } read: {
            $0.security.signingKey.isEmpty ? "" : "(set)"
        },
        .integer(
            "sources.concurrency", 1...1024, "fetches from the origin in flight at once (they hold no image worker)",
            \.sources.concurrency),
        .integer(
            "sources.queueDepth", 1...1_000_000, "fetches that may wait for a slot before a request gets 503",
            \.sources.queueDepth),
        .integer(
            "sources.connectTimeoutMs", 10...600_000, "time to connect to the origin, in ms",
            \.sources.connectTimeoutMs),
        .integer(
            "sources.timeoutMs", 10...3_600_000, "time for one whole fetch from the origin, in ms (over: 504)",
            \.sources.timeoutMs),
        .integer(
            "sources.maxRedirects", 0...20, "redirects followed, to the same scheme and host only",
            \.sources.maxRedirects),
        .string(
            "sources.caFile", "PEM file of CA certificates trusted for the origin besides the system's",
            allowEmpty: true, isPath: true, \.sources.caFile),
        .bytes(
            "sources.cacheMaxBytes", 0...(1 << 50),
            "downloaded sources kept on disk under cache.dir/sources (0: none kept)", \.sources.cacheMaxBytes),
        .integer(
            "sources.revalidateSeconds", 0...31_536_000,
            "how long a downloaded source is used before a conditional request checks it, in seconds",
            \.sources.revalidateSeconds),
        .integer(
            "sources.staleSeconds", 0...31_536_000,
            "how long past revalidateSeconds a kept source is still served while its re-check is pending or has failed, in seconds (0: wait for the re-check)",
            \.sources.staleSeconds),
        .string(
            "s3.endpoint", "S3 endpoint URL (empty: AWS's; set for MinIO, R2, Ceph)", allowEmpty: true, \.s3.endpoint),
        .string("s3.region", "S3 region (empty: us-east-1)", allowEmpty: true, \.s3.region),
        .boolean("s3.pathStyle", "bucket in the URL's path rather than its host name", \.s3.pathStyle),
        .string("s3.accessKeyId", "S3 access key id", allowEmpty: true, \.s3.accessKeyId),
        .secret("s3.secretAccessKey", "S3 secret access key (never printed)", \.s3.secretAccessKey),
        .secret("s3.sessionToken", "S3 session token, for temporary credentials (never printed)", \.s3.sessionToken),
        .boolean(
            "security.onlyPresets", "only preset= requests are served (with src, dpr, format, sig)",
            \.security.onlyPresets),
        .secret(
            "security.adminToken", "bearer token of POST /purge (empty: no such route; never printed)",
            \.security.adminToken),
        .stringMap(
            "presets", "named parameter sets: a JSON object of name to query string", values: "query strings",
            value: "a query string", \.presets),
        .boolean(
            "imgproxy.enabled", "also answer imgproxy's URL format (/SIGNATURE/OPTIONS/plain/SOURCE)",
            \.imgproxy.enabled),
        .hexSecret("imgproxy.key", "imgproxy's signing key, hex (else IMGPROXY_KEY; never printed)", \.imgproxy.key),
        .hexSecret(
            "imgproxy.salt", "imgproxy's signing salt, hex (else IMGPROXY_SALT; never printed)", \.imgproxy.salt),
        .integer(
            "imgproxy.signatureSize", 1...32, "bytes of the imgproxy signature kept (else IMGPROXY_SIGNATURE_SIZE)",
            \.imgproxy.signatureSize),
        .stringMap(
            "imgproxy.presets", "imgproxy presets: a JSON object of name to options (rs:fill:300:200/q:80)",
            values: "imgproxy options", value: "imgproxy options", \.imgproxy.presets),
        .boolean(
            "thumbor.enabled", "also answer thumbor's URL format (/unsafe/… and /HASH/…)", \.thumbor.enabled),
        .secret(
            "thumbor.securityKey",
            "thumbor's SECURITY_KEY, signing its URLs (else THUMBOR_SECURITY_KEY; never printed)",
            \.thumbor.securityKey),
        ConfigKey(
            "thumbor.allowUnsafe", "answer /unsafe/ thumbor URLs (default: true without a security key, false with one)"
        ) { c, v, _ in
            switch v {
            case .bool(let b): c.thumbor.allowUnsafe = b
            case .string("true"), .string("1"): c.thumbor.allowUnsafe = true
            case .string("false"), .string("0"): c.thumbor.allowUnsafe = false
            default: return "must be true or false"
            }
            return nil
        } read: {
            "\($0.thumborUnsafeAllowed)"
        },
        ConfigKey(
            "watermarks",
            "named watermarks: a JSON object of name to {src, position, opacity, scale, margin}, read at start-up"
        ) { c, v, _ in
            guard let object = v.jsonObject else {
                return "must be a JSON object of watermark names to {\"src\": PATH, …}"
            }
            var marks: [String: Watermark] = [:]
            for (name, value) in object {
                switch Watermark.configured(value) {
                case .success(let mark): marks[name] = mark
                case .failure(let why): return "'\(name)': \(why.message)"
                }
            }
            c.watermarks = marks
            return nil
        } read: {
            "{"
                + $0.watermarks.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value.configText)" }.joined(
                    separator: ", ") + "}"
        },
        .choice("log.format", "access and event log format", \.log.format),
        .choice("log.level", "least severe event that is logged", \.log.level),
        .boolean("log.access", "one line per request on stdout", \.log.access),
    ]

    /// The key named `name`, if there is one.
    public static func key(_ name: String) -> ConfigKey? { keys.first { $0.name == name } }

    /// The effective value of every key, as text (the signing key is never shown).
    public var rendered: [(key: String, value: String)] {
        Config.keys.map { ($0.name, $0.read(self)) }
    }
}
