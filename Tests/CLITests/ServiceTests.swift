import AspectClient
import Core
import Foundation
import Imaging
import ImagingTestSupport
import TestSupport
import Testing

/// `aspect serve` end to end: the real binary, real sockets, real files, real libvips.
@Suite(.serialized) struct ServiceTests {
    let dir: URL

    init() throws {
        dir = try ServeProcess.sampleFolder("service")
    }

    func serve(_ env: [String: String] = [:]) throws -> ServeProcess {
        try ServeProcess(samples: dir, env: env)
    }

    static func get(_ port: Int, _ target: String, headers: [String: String] = [:], method: String = "GET") throws
        -> TestClient.Response
    {
        let c = try TestClient(port: port, timeoutSeconds: 60)
        let extra = headers.map { "\($0.key): \($0.value)\r\n" }.joined()
        try c.send("\(method) \(target) HTTP/1.1\r\nHost: x\r\n\(extra)\r\n")
        return try c.response(head: method == "HEAD")
    }

    static func magic(_ b: [UInt8]) -> String? {
        if b.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if b.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if b.count > 12, b[8..<12].elementsEqual("WEBP".utf8) { return "image/webp" }
        if b.count > 12, b[4..<12].elementsEqual("ftypavif".utf8) { return "image/avif" }
        return nil
    }

    @Test func everyModeAndFormatEndToEnd() throws {
        let s = try serve()
        let sources = [
            ("landscape.jpg", Size(width: 2400, height: 1600)), ("portrait.jpg", Size(width: 1200, height: 1800)),
            ("logo.png", Size(width: 800, height: 800)),
        ]
        for (src, size) in sources {
            for mode in Mode.allCases {
                for format in ["jpeg", "png", "webp", "avif", "auto"] {
                    let query = "src=\(src)&w=300&ratio=4:3&mode=\(mode.rawValue)&format=\(format)"
                    let r = try Self.get(s.port, "/thumb?" + query)
                    #expect(r.status == 200, "\(query): \(r.text)")
                    #expect(Self.magic(r.body) == r.headers["content-type"], "\(query)")
                    if format != "auto" { #expect(r.headers["content-type"] == "image/\(format)") }
                    #expect((r.headers["vary"] == "Accept") == (format == "auto"))
                    let plan = try Geometry.plan(
                        source: size, request: ThumbRequest.parse(query: query, limits: RequestLimits()),
                        limits: RequestLimits())
                    let img = try ImageFile.decode(r.body)
                    #expect(Size(width: img.width, height: img.height) == plan.output, "\(query)")
                }
            }
        }
        // auto: WebP when accepted, PNG for alpha, else JPEG.
        #expect(
            try Self.get(s.port, "/thumb?src=landscape.jpg&w=100", headers: ["Accept": "image/webp,*/*"]).headers[
                "content-type"] == "image/webp")
        #expect(try Self.get(s.port, "/thumb?src=logo.png&w=100").headers["content-type"] == "image/png")
        #expect(try Self.get(s.port, "/thumb?src=landscape.jpg&w=100").headers["content-type"] == "image/jpeg")
    }

    /// With the hit's bytes held in memory (sent with the head in one write) and without
    /// (sendfile): the same bytes.
    @Test(arguments: ["32KiB", "0"])
    func missThenHitThen304AndHead(memoryFileBytes: String) throws {
        let s = try serve(["ASPECT_CACHE_MEMORYFILEBYTES": memoryFileBytes])
        let target = "/thumb?src=landscape.jpg&w=300&ratio=4:3&mode=fill"
        let first = try Self.get(s.port, target)
        let second = try Self.get(s.port, "/thumb?mode=fill&ratio=4%3A3&w=300&src=landscape.jpg")  // another spelling
        #expect(first.headers["x-cache"] == "MISS" && second.headers["x-cache"] == "HIT")
        #expect(first.body == second.body && !first.body.isEmpty)
        let third = try Self.get(s.port, target)
        #expect(third.headers["x-cache"] == "HIT" && third.body == first.body, "a hit of a file already held open")
        let etag = try #require(first.headers["etag"])
        #expect(etag.count == 66 && etag == second.headers["etag"])
        #expect(first.headers["cache-control"] == "public, max-age=31536000, immutable")
        let notModified = try Self.get(s.port, target, headers: ["If-None-Match": "\"other\", \(etag)"])
        #expect(notModified.status == 304 && notModified.body.isEmpty && notModified.headers["etag"] == etag)
        let head = try Self.get(s.port, target, method: "HEAD")
        #expect(
            head.status == 200 && head.headers["content-length"] == "\(first.body.count)"
                && head.headers["x-cache"] == "HIT")
    }

    @Test func entriesSurviveARestartAndATouchedSourceMisses() throws {
        let target = "/thumb?src=square.webp&w=200&mode=fill&format=png"
        var s = try serve()
        let first = try Self.get(s.port, target)
        #expect(first.headers["x-cache"] == "MISS")
        s.signal(SIGTERM)
        #expect(s.wait(seconds: 10) == 0)
        s = try serve()
        let again = try Self.get(s.port, target)
        #expect(
            again.headers["x-cache"] == "HIT" && again.body == first.body
                && again.headers["etag"] == first.headers["etag"])
        // A new modification time is a new source: a new key, a MISS, a new ETag.
        let path = dir.appendingPathComponent("images/square.webp").path
        var times = [timespec(tv_sec: time(nil) + 5, tv_nsec: 0), timespec(tv_sec: time(nil) + 5, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        let touched = try Self.get(s.port, target)
        #expect(touched.headers["x-cache"] == "MISS" && touched.headers["etag"] != first.headers["etag"])
    }

    /// `images.watchChanges` on (hits learn of changes from inotify) and off (a stat(2)
    /// per hit): a source renamed over, written in place, or whose folder is replaced is a
    /// MISS with a new ETag on the very next request, each time; the request after is a HIT.
    @Test(arguments: ["true", "false"])
    func aChangedSourceIsANewKeyOnTheVeryNextRequest(watch: String) throws {
        let fm = FileManager.default
        let images = dir.appendingPathComponent("images")
        let sub = images.appendingPathComponent("swap-\(watch)")
        let file = sub.appendingPathComponent("x.jpg")
        // Two versions of other sizes, so every change is another identity.
        let versions = try ["landscape.jpg", "portrait.jpg"].map {
            try Data(contentsOf: images.appendingPathComponent($0))
        }
        try fm.createDirectory(at: sub, withIntermediateDirectories: true)
        try versions[0].write(to: file)
        let s = try serve(["ASPECT_IMAGES_WATCHCHANGES": watch])
        let target = "/thumb?src=swap-\(watch)/x.jpg&w=64&format=png"
        var last = ""
        for step in 0..<9 {
            let version = versions[step % 2]
            switch step % 3 {
            case 1:
                try version.write(to: sub.appendingPathComponent(".next"))
                #expect(rename(sub.appendingPathComponent(".next").path, file.path) == 0)
            case 2:
                // Written in place: truncated and rewritten, same inode.
                let handle = try FileHandle(forWritingTo: file)
                try handle.truncate(atOffset: 0)
                try handle.write(contentsOf: version)
                try handle.close()
            default:
                if step > 0 {
                    #expect(rename(sub.path, images.appendingPathComponent("swap-\(watch).\(step)").path) == 0)
                    try fm.createDirectory(at: sub, withIntermediateDirectories: true)
                    try version.write(to: file)
                }
            }
            let miss = try Self.get(s.port, target)
            let etag = miss.headers["etag"] ?? ""
            #expect(miss.status == 200 && miss.headers["x-cache"] == "MISS" && etag != last, "step \(step)")
            let hit = try Self.get(s.port, target)
            #expect(hit.headers["x-cache"] == "HIT" && hit.headers["etag"] == etag, "step \(step)")
            last = etag
        }
    }

    static func folderBytes(_ url: URL) -> Int {
        let files = FileManager.default.enumerator(
            at: url, includingPropertiesForKeys: [.fileSizeKey, .isRegularFileKey])
        var total = 0
        while let f = files?.nextObject() as? URL {
            // Files only: the shard folders' own sizes are the file system's, not the cache's.
            guard let v = try? f.resourceValues(forKeys: [.fileSizeKey, .isRegularFileKey]), v.isRegularFile == true
            else {
                continue
            }
            // The index by source (about 65 bytes a result, for purges) is not a result.
            if f.path.contains("/by-source/") { continue }
            total += v.fileSize ?? 0
        }
        return total
    }

    @Test func aSmallCacheStaysUnderItsCap() throws {
        let cap = 150_000
        let s = try serve(["ASPECT_CACHE_MAXBYTES": "\(cap)"])
        for w in 100..<300 {
            let r = try Self.get(s.port, "/thumb?src=landscape.jpg&w=\(w)&format=png")
            #expect(r.status == 200)
        }
        let used = Self.folderBytes(dir.appendingPathComponent("cache"))
        #expect(used <= cap && used > cap / 2, "cache folder holds \(used) bytes for a cap of \(cap)")
        let metrics = try Self.get(s.port, "/metrics").text
        #expect(Self.value(metrics, "aspect_cache_evictions_total") ?? 0 > 0)
        #expect(Self.value(metrics, "aspect_cache_bytes").map { Int($0) <= cap } == true)
        // The lists by source, on disk for a purge, hold every key kept (and evicted ones
        // until a list is compacted, past 32 KiB): one line (65 bytes) a key.
        let listed = try FileManager.default.contentsOfDirectory(
            atPath: dir.appendingPathComponent("cache/by-source").path
        ).compactMap { try? String(contentsOf: dir.appendingPathComponent("cache/by-source/\($0)"), encoding: .utf8) }
            .joined().split(separator: "\n")
        let held = Int(Self.value(metrics, "aspect_cache_entries") ?? -1)
        #expect(Set(listed).count == listed.count && listed.count >= held && listed.count * 65 <= 32 << 10 + 65)
        let kept = try FileManager.default.subpathsOfDirectory(atPath: dir.appendingPathComponent("cache").path)
            .filter { $0.count > 68 && $0.dropFirst(2).hasPrefix("/") }.map { String($0.dropFirst(3).prefix(64)) }
        #expect(
            kept.count == held && Set(kept).isSubset(of: Set(listed.map(String.init))),
            "\(listed.count) listed, \(kept.count) kept, \(held) held")
    }

    /// The process's descriptors that name files of the cache folder, and how many of
    /// those files have been deleted (evicted) since.
    static func cacheDescriptors(_ pid: Int32) -> (open: Int, deleted: Int) {
        let fds = "/proc/\(pid)/fd"
        var open = 0
        var deleted = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? [] {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fds)/\(name)"),
                target.contains("/cache/")
            else { continue }
            open += 1
            if target.hasSuffix("(deleted)") { deleted += 1 }
        }
        return (open, deleted)
    }

    @Test func hitsKeepAtMostOpenFilesDescriptorsAndNoneOnEvictedEntries() throws {
        let s = try serve(["ASPECT_CACHE_MAXBYTES": "150000", "ASPECT_CACHE_OPENFILES": "8"])
        var first: [Int: [UInt8]] = [:]
        for w in 100..<160 {
            let miss = try Self.get(s.port, "/thumb?src=landscape.jpg&w=\(w)&format=png")
            let hit = try Self.get(s.port, "/thumb?src=landscape.jpg&w=\(w)&format=png")
            #expect(miss.headers["x-cache"] == "MISS" && hit.headers["x-cache"] == "HIT")
            #expect(hit.body == miss.body, "w=\(w): the held-open file gave other bytes")
            first[w] = miss.body
        }
        let held = Self.cacheDescriptors(s.process.processIdentifier)
        #expect(held.open > 0 && held.open <= 8, "\(held.open) cache files held open for a limit of 8")
        #expect(held.deleted == 0, "\(held.deleted) descriptors still hold evicted entries")
        // Entries evicted and rendered again are served right, from a fresh descriptor.
        for w in 100..<110 {
            let again = try Self.get(s.port, "/thumb?src=landscape.jpg&w=\(w)&format=png")
            #expect(again.status == 200 && again.body == first[w])
        }
    }

    @Test func killedDuringMissesRestartsWithOnlyWholeEntries() throws {
        let s = try serve(["ASPECT_SERVER_WORKERS": "2"])
        let targets = (0..<50).map { "/thumb?src=landscape.jpg&w=\(400 + $0 * 7)&format=png" }
        let clients = try targets.map { _ in try TestClient(port: s.port, timeoutSeconds: 30) }
        for (c, t) in zip(clients, targets) { try c.send(TestClient.get(t)) }
        // Killed once the first render is stored (counted after it is), with most still queued.
        let stored = #"aspect_requests_total{route="/thumb",status="200"}"#
        try Self.waitForMetrics(s.port) { $0.contains(stored) }
        s.signal(SIGKILL)
        _ = s.wait(seconds: 5)
        let restarted = try serve(["ASPECT_SERVER_WORKERS": "2"])
        // Leftovers go in the background fill, which has ended when the gauge says 0.
        try Self.waitForMetrics(restarted.port) { $0.contains("aspect_cache_indexing 0") }
        let cache = dir.appendingPathComponent("cache")
        let leftovers = (FileManager.default.enumerator(atPath: cache.path)?.allObjects as? [String] ?? []).filter {
            $0.contains(".tmp-")
        }
        #expect(leftovers.isEmpty, "temporary files survive a restart: \(leftovers)")
        var hits = 0
        for t in targets {
            let r = try Self.get(restarted.port, t)
            #expect(r.status == 200)
            if r.headers["x-cache"] == "HIT" { hits += 1 }
            let img = try ImageFile.decode(r.body)
            #expect(img.width > 0, "\(t) decodes whole")
        }
        #expect(hits > 0 && hits < 50, "some renders finished before the kill, some did not: \(hits) hits")
    }

    /// The service's /metrics text, empty when it cannot be read.
    static func metrics(_ port: Int) -> String { (try? get(port, "/metrics").text) ?? "" }

    /// Polls /metrics until `done` holds of it (an issue after 10 s).
    static func waitForMetrics(_ port: Int, until done: (String) -> Bool) throws {
        try HTTPOriginTests.waitUntil { done(metrics(port)) }
    }

    /// The sum of the values of `names` in an exposition (those present).
    static func sum(_ exposition: String, _ names: [String]) -> Double {
        names.compactMap { value(exposition, $0) }.reduce(0, +)
    }

    static func value(_ exposition: String, _ name: String) -> Double? {
        for line in exposition.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.split(separator: " ").last ?? "")
        }
        return nil
    }

    @Test func symlinksThatLeaveTheRootAreRefused() throws {
        let images = dir.appendingPathComponent("images")
        let outside = dir.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: images.appendingPathComponent("square.webp"), to: outside.appendingPathComponent("secret.webp"))
        let fm = FileManager.default
        try fm.createSymbolicLink(
            atPath: images.appendingPathComponent("escape.webp").path,
            withDestinationPath: outside.appendingPathComponent("secret.webp").path)
        try fm.createSymbolicLink(
            atPath: images.appendingPathComponent("elsewhere").path, withDestinationPath: outside.path)
        try fm.createSymbolicLink(
            atPath: images.appendingPathComponent("alias.webp").path, withDestinationPath: "square.webp")
        let s = try serve()
        for target in ["/thumb?src=escape.webp&w=50", "/thumb?src=elsewhere/secret.webp&w=50"] {
            let r = try Self.get(s.port, target)
            #expect(r.status == 403, "\(target): \(r.status)")
            #expect(r.text.contains("forbidden_path") && r.text.contains("outside the image root"))
        }
        // A symlink that stays inside is an ordinary source.
        #expect(try Self.get(s.port, "/thumb?src=alias.webp&w=50").status == 200)
        #expect(try Self.get(s.port, "/thumb?src=missing.webp&w=50").status == 404)
        #expect(try Self.get(s.port, "/thumb?src=..%2Foutside%2Fsecret.webp&w=50").status == 403)
    }

    @Test func aRenderPastTheProcessingTimeoutIs504AndFreesItsWorker() throws {
        // The largest photo at 1600×900 is decoded at 1/2 under either shrink-on-load rule
        // and takes about 130 ms in a release build here (aspect-bench): far past 10 ms.
        try FileManager.default.copyItem(
            at: URL(fileURLWithPath: try Photos.path("big.jpg")),
            to: dir.appendingPathComponent("images/big.jpg"))
        let s = try serve([
            "ASPECT_LIMITS_PROCESSINGTIMEOUTMS": "10", "ASPECT_SERVER_WORKERS": "1",
            "ASPECT_LIMITS_MAXDIMENSION": "8192",
        ])
        for i in 0..<3 {
            let r = try Self.get(s.port, "/thumb?src=big.jpg&w=1600&h=900&mode=fill&q=\(70 + i)")
            #expect(r.status == 504, "\(r.status) \(r.text)")
            #expect(r.text.contains("processing_timeout") && r.text.contains("limits.processingTimeoutMs"))
        }
        // Each 504 came from the one worker, which is free again after each.
        let metrics = try Self.get(s.port, "/metrics").text
        #expect(Self.value(metrics, "aspect_workers_busy") == 0)
        #expect(metrics.contains(#"aspect_requests_total{route="/thumb",status="504"} 3"#))
    }

    /// `aspect sign` signs as the server checks (the flow's signing rules are ServiceTests'
    /// FlowTests, in process).
    @Test func urlsSignedByTheSignCommandAreServed() throws {
        let key = "a signing key of some length"
        let s = try serve(["ASPECT_SECURITY_SIGNINGKEY": key])
        let url = "http://127.0.0.1:\(s.port)/thumb?src=landscape.jpg&w=120&ratio=4%3A3&mode=fill"
        let signed = try Binary.run(["sign", url, "--signing-key", key])
        #expect(signed.status == 0, "\(signed.stderr)")
        let target = String(
            signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst("http://127.0.0.1:\(s.port)".count))
        #expect(target.contains("&sig="))
        let r = try Self.get(s.port, target)
        #expect(r.status == 200)
        let img = try ImageFile.decode(r.body)
        #expect(img.width == 120 && img.height == 90)
        #expect(try Self.get(s.port, "/thumb?src=landscape.jpg&w=120&ratio=4%3A3&mode=fill").status == 403)
    }

    /// The server's peak resident memory, from /proc: its own process, so no other test moves it.
    static func peakRSSKB(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
        return line.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") }
    }

    /// A 30000×30000 PNG of a few hundred bytes (2.7 GB decoded) is a 413 from its header,
    /// and the server's peak memory stays at its size at rest.
    @Test func aDecompressionBombIs413AndNeverDecoded() throws {
        try Data(Mutation.pngBomb()).write(to: dir.appendingPathComponent("images/bomb.png"))
        let s = try serve()
        for _ in 0..<3 {
            let r = try Self.get(s.port, "/thumb?src=bomb.png&w=100")
            #expect(r.status == 413)
            #expect(String(decoding: r.body, as: UTF8.self).contains("source_too_large"))
        }
        let peak = try #require(Self.peakRSSKB(s.process.processIdentifier))
        // Seen: 49 MB (debug build), the server's size at rest.
        #expect(peak < 150 * 1024, "peak RSS \(peak) kB")
    }

    @Test func anUnusableCacheFolderStillServes() throws {
        let blocker = dir.appendingPathComponent("not-a-folder")
        try Data("x".utf8).write(to: blocker)
        let s = try serve(["ASPECT_CACHE_DIR": "not-a-folder/cache"])
        let r = try Self.get(s.port, "/thumb?src=landscape.jpg&w=100")
        #expect(r.status == 200 && r.headers["x-cache"] == "MISS")
        #expect(try Self.get(s.port, "/thumb?src=landscape.jpg&w=100").headers["x-cache"] == "MISS")
        let ready = try Self.get(s.port, "/readyz")
        #expect(ready.status == 200 && ready.text.contains("serving uncached"), "\(ready.text)")
    }
}
