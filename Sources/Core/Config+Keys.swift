extension Config {
    /// Every key of the configuration, in the order the README's table lists them.
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
            "server.maxConnections", 1...1_000_000, "open connections before new ones are refused",
            \.server.maxConnections),
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
        .string("images.root", "the folder src is relative to", allowEmpty: false, isPath: true, \.images.root),
        ConfigKey("images.formats", "source formats decoded: a list, or names joined by commas") { c, v, _ in
            let names: [String]?
            switch v {
            case .string(let s): names = s.split(separator: ",").map { String($0.trimmingSpaces) }
            case .array(let a):
                names = a.map { if case .string(let s) = $0 { s } else { "" } }
            default: names = nil
            }
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
        .integer(
            "http.maxAgeSeconds", 0...1_000_000_000, "Cache-Control max-age of results, in seconds",
            \.http.maxAgeSeconds),
        .boolean("http.demoPage", "the demo page at / (sample images in every mode, a URL builder)", \.http.demoPage),
        .integer(
            "limits.maxDimension", 1...65_535, "largest output side, in pixels, dpr included", \.limits.maxDimension),
        .decimal("limits.maxDpr", 1...10, "largest dpr", \.limits.maxDpr),
        .bytes("limits.maxSourceBytes", 1...(1 << 40), "largest source file", \.limits.maxSourceBytes),
        .bytes("limits.maxSourcePixels", 1...(1 << 40), "largest source, width × height", \.limits.maxSourcePixels),
        .integer(
            "limits.processingTimeoutMs", 10...3_600_000, "longest time for one image job, in ms",
            \.limits.processingTimeoutMs),
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
