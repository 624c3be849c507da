import Foundation
import Glibc
import Imaging
import ImagingTestSupport
import TestSupport
import Testing

/// The defects hostile testing found, each through the real binary: colours of a P3
/// source, a root swapped under a running server, accept out of descriptors, error
/// responses read whole, SIGTERM with jobs queued, a cache folder that comes back, bytes
/// that are not HTTP, and a JSON log that stays JSON.
@Suite(.serialized) struct HardeningTests {
    let dir: URL
    var images: URL { dir.appendingPathComponent("images") }

    init() throws {
        dir = try ServeProcess.sampleFolder("hardening")
    }

    func serve(_ env: [String: String] = [:], fileLimit: Int? = nil) throws -> ServeProcess {
        try ServeProcess(samples: dir, env: env, fileLimit: fileLimit)
    }

    static func get(_ port: Int, _ target: String) throws -> TestClient.Response {
        let c = try TestClient(port: port, timeoutSeconds: 30)
        try c.send(TestClient.get(target))
        return try c.response()
    }

    /// 1: a Display P3 JPEG, as an iPhone writes them, served in sRGB.
    @Test func aDisplayP3PhotoIsServedInSRGB() throws {
        let p3 = dir.appendingPathComponent("p3.icc")
        try Data(ICCProfileMaker.profile(ICCProfileMaker.displayP3, description: "Display P3")).write(to: p3)
        let jpeg = try ImageFile.encode(
            RawImage(width: 64, height: 48, filledWith: [200, 30, 30]), as: .jpeg,
            profile: .convertFromSRGB(path: p3.path))
        try Data(jpeg).write(to: images.appendingPathComponent("p3.jpg"))
        let s = try serve()
        for format in ["png", "jpeg", "webp"] {
            let r = try Self.get(s.port, "/thumb?src=p3.jpg&w=32&format=\(format)")
            #expect(r.status == 200)
            let img = try ImageFile.decode(r.body)
            #expect(near(img.pixel(16, 12), [200, 30, 30], 5), "\(format): \(img.pixel(16, 12))")
            #expect(try ImageFile.iccProfile(r.body) == nil, "no profile is sent: the pixels are sRGB")
        }
    }

    /// 2: a root that is a symlink flipped to a new folder, and a root folder renamed and
    /// replaced, are followed by a running server; /readyz tells when the root is gone.
    @Test func aRootFlippedOrSwappedUnderARunningServerIsFollowed() throws {
        let fm = FileManager.default
        func folder(_ name: String, _ colour: [UInt8]) throws {
            let d = dir.appendingPathComponent(name)
            try fm.createDirectory(at: d, withIntermediateDirectories: true)
            try Data(try ImageFile.encode(RawImage(width: 64, height: 48, filledWith: colour), as: .png)).write(
                to: d.appendingPathComponent("a.png"))
        }
        func colour(_ port: Int) throws -> [UInt8] {
            let r = try Self.get(port, "/thumb?src=a.png&w=16&format=png")
            guard r.status == 200 else { return [UInt8(r.status / 100)] }
            return try ImageFile.decode(r.body).pixel(8, 6)
        }
        /// The colour served once it is `want`, polling for up to 10 s (the check interval
        /// is 200 ms; a clean CI run with every suite at once once took over 3 s to see it);
        /// every answer on the way must be the old or the new image, never an error.
        func eventually(_ port: Int, _ want: [UInt8], old: [UInt8]) throws -> [UInt8] {
            let deadline = Date().addingTimeInterval(10)
            var seen = try colour(port)
            while !near(seen, want, 2), Date() < deadline {
                #expect(near(seen, old, 2), "neither the old nor the new image: \(seen)")
                usleep(50_000)
                seen = try colour(port)
            }
            return seen
        }
        try folder("v1", [255, 0, 0])
        try folder("v2", [0, 255, 0])
        try fm.createSymbolicLink(atPath: dir.appendingPathComponent("current").path, withDestinationPath: "v1")
        let linked = try serve(["ASPECT_IMAGES_ROOT": "current", "ASPECT_IMAGES_ROOTCHECKMS": "200"])
        #expect(near(try colour(linked.port), [255, 0, 0], 2))
        try fm.createSymbolicLink(atPath: dir.appendingPathComponent("next").path, withDestinationPath: "v2")
        #expect(rename(dir.appendingPathComponent("next").path, dir.appendingPathComponent("current").path) == 0)
        // A request the server has not seen yet follows it at once (the source would
        // otherwise be refused as leading out of the root it knew); one it has seen, within
        // the check interval.
        let fresh = try Self.get(linked.port, "/thumb?src=a.png&w=17&format=png")
        #expect(fresh.status == 200)
        let freshColour = try ImageFile.decode(fresh.body).pixel(8, 6)
        #expect(near(freshColour, [0, 255, 0], 2), "\(freshColour)")
        #expect(near(try eventually(linked.port, [0, 255, 0], old: [255, 0, 0]), [0, 255, 0], 2))

        try folder("plain", [0, 0, 255])
        let swapped = try serve(["ASPECT_IMAGES_ROOT": "plain", "ASPECT_IMAGES_ROOTCHECKMS": "200"])
        #expect(near(try colour(swapped.port), [0, 0, 255], 2))
        #expect(rename(dir.appendingPathComponent("plain").path, dir.appendingPathComponent("plain.old").path) == 0)
        try folder("plain", [255, 255, 0])
        let seen = try eventually(swapped.port, [255, 255, 0], old: [0, 0, 255])
        #expect(near(seen, [255, 255, 0], 2), "the new folder is served within the check interval: \(seen)")
        #expect(try Self.get(swapped.port, "/readyz").status == 200)
        try fm.removeItem(at: dir.appendingPathComponent("plain"))
        let gone = try Self.get(swapped.port, "/readyz")
        #expect(gone.status == 503 && gone.text.contains("images.root"), "\(gone.text)")
        try folder("plain", [255, 255, 255])
        #expect(try Self.get(swapped.port, "/readyz").status == 200)
    }

    /// 3: under `ulimit -n 64` with 80 connections held, accept(2) fails with EMFILE; the
    /// loops pause accepting instead of spinning, and resume when descriptors are free.
    @Test func outOfDescriptorsTheServerDoesNotSpin() throws {
        raiseFileLimit(4096)
        let s = try serve(["ASPECT_SERVER_ACCEPTBACKOFFMS": "100"], fileLimit: 64)
        var held: [TestClient] = []
        for _ in 0..<80 { held.append(try TestClient(port: s.port)) }
        usleep(500_000)
        let before = try cpuTicks(s.process.processIdentifier)
        sleep(2)
        let used = try cpuTicks(s.process.processIdentifier) - before
        // Spinning, two loops burnt about 400 ticks (100 a second each) here.
        #expect(used <= 20, "the server used \(used) ticks of CPU in 2 s while out of descriptors")
        held.removeAll()
        usleep(500_000)
        let metrics = try Self.get(s.port, "/metrics")
        let paused = metrics.text.split(separator: "\n").first { $0.hasPrefix("aspect_accept_paused_total ") }
        #expect((paused?.split(separator: " ").last.flatMap { Int($0) } ?? 0) > 0, "\(paused ?? "missing")")
        #expect(try Self.get(s.port, "/healthz").status == 200, "accepting again")
        s.signal(SIGTERM)
        #expect(s.wait(seconds: 15) == 0)
        #expect(s.errors.contains("not accepting for 100 ms"))
    }

    /// 4: a client still sending when the server answers 431 (or 503 for too many
    /// connections, every one mid-render) reads the whole answer: the server half-closes and
    /// drops what else comes, rather than closing over unread bytes, which the kernel
    /// answers with a reset.
    @Test func aClientThatSends64KBOfHeadersReadsTheWholeAnswer() throws {
        let s = try serve(["ASPECT_SERVER_MAXCONNECTIONS": "2", "ASPECT_SERVER_WORKERS": "1"])
        let head = "GET /healthz HTTP/1.1\r\nHost: x\r\n"
        let pad = (0..<640).map { "X-Pad-\($0): \(String(repeating: "a", count: 90))\r\n" }.joined() + "\r\n"
        let bytes = Array((head + pad).utf8)
        #expect(bytes.count > 64 * 1024)
        func sendSlowly(_ c: TestClient) throws {
            for start in stride(from: 0, to: bytes.count, by: 4096) {
                try c.send(Array(bytes[start..<min(bytes.count, start + 4096)]))
                usleep(3_000)
            }
        }
        do {
            let c = try TestClient(port: s.port)
            try sendSlowly(c)
            let r = try c.response()
            #expect(r.status == 431 && r.headers["connection"] == "close")
            #expect(r.text.contains("headers_too_large"))
            #expect(c.closedByPeer())
        }
        usleep(100_000)

        // Two renders that take a while (one waits for the one worker): none can be given
        // up. Each head is read before the next connects (a connection whose request has
        // not arrived is idle, and would be given up for the newcomer).
        let holders = try (0..<2).map { i in
            let c = try TestClient(port: s.port, timeoutSeconds: 60)
            try c.send(TestClient.get("/thumb?src=landscape.jpg&w=\(4000 - i)&upscale=1&format=png"))
            if i == 0 {
                // Read and rendering (asked on the table's second place, free until now).
                try ServiceTests.waitForMetrics(s.port) { $0.contains("aspect_workers_busy 1") }
            } else {
                usleep(500_000)  // the table is full: no /metrics to ask
            }
            return c
        }
        let refused = try TestClient(port: s.port)
        try sendSlowly(refused)
        let answer = try refused.response()
        #expect(
            answer.status == 503 && answer.text.contains("too_many_connections"),
            "\(answer.status) \(answer.text.prefix(300))")
        #expect(answer.headers["retry-after"] != nil)
        _ = holders
    }

    /// 5: SIGTERM with jobs running and queued: at the drain deadline every waiting client
    /// gets a whole 503 with Retry-After and Connection: close, never a bare close.
    @Test func sigtermWithJobsQueuedAnswersEveryClient() throws {
        try FileManager.default.copyItem(
            atPath: try Photos.path("big.jpg"), toPath: images.appendingPathComponent("big.jpg").path)
        let s = try serve([
            "ASPECT_SERVER_WORKERS": "1", "ASPECT_SERVER_EVENTLOOPS": "1", "ASPECT_SERVER_DRAINTIMEOUTMS": "300",
        ])
        let clients = try (0..<6).map { i in
            let c = try TestClient(port: s.port, timeoutSeconds: 20)
            try c.send(TestClient.get("/thumb?src=big.jpg&w=\(3000 + i)&format=png"))
            return c
        }
        // Every request read (one rendering, five queued): an unread one's connection is idle,
        // and a drain closes idle connections without an answer.
        try ServiceTests.waitForMetrics(s.port) {
            ServiceTests.sum($0, ["aspect_workers_busy", "aspect_queue_depth"]) >= 6
        }
        s.signal(SIGTERM)
        var statuses: [Int] = []
        for c in clients {
            let r = try c.response()
            statuses.append(r.status)
            if r.status == 503 {
                #expect(r.text.contains("shutting_down") && r.headers["retry-after"] == "1")
                #expect(r.headers["connection"] == "close")
            } else {
                #expect(r.status == 200)
            }
        }
        #expect(statuses.contains(503), "some were still waiting at the deadline: \(statuses)")
        #expect(s.wait(seconds: 10) == 0)
    }

    /// 6: a cache folder that cannot be used at start (a read-only file system, then a
    /// full one) is tried again and used once it can be, with what it already held indexed.
    @Test func aCacheFolderThatComesBackIsUsedAgain() throws {
        let fs = dir.appendingPathComponent("fs")
        try FileManager.default.createDirectory(at: fs, withIntermediateDirectories: true)
        try #require(shell("mount -t tmpfs -o size=2m tmpfs '\(fs.path)'"), "mounting a tmpfs needs root")
        defer { _ = shell("umount '\(fs.path)'") }
        let env = ["ASPECT_CACHE_DIR": "fs/cache", "ASPECT_CACHE_RECHECKMS": "200"]
        let first = "/thumb?src=landscape.jpg&w=120&format=jpeg"
        do {
            let a = try serve(env)
            #expect(try Self.get(a.port, first).headers["x-cache"] == "MISS")
            #expect(try Self.get(a.port, first).headers["x-cache"] == "HIT")
        }
        // Read-only at start: serves uncached and says so.
        #expect(shell("mount -o remount,ro '\(fs.path)'"))
        let b = try serve(env)
        #expect(try Self.get(b.port, first).headers["x-cache"] == "MISS")
        #expect(try Self.get(b.port, "/readyz").text.contains("serving uncached"))
        #expect(shell("mount -o remount,rw '\(fs.path)'"))
        usleep(300_000)
        // A miss tries the folder again; the entry made before is found in it.
        _ = try Self.get(b.port, "/thumb?src=landscape.jpg&w=121&format=jpeg")
        #expect(try Self.get(b.port, first).headers["x-cache"] == "HIT")
        #expect(
            try Self.get(b.port, "/readyz").text.hasPrefix("ready")
                && !Self.get(b.port, "/readyz").text.contains("uncached"))

        // Full at start: the same once space is freed.
        #expect(shell("rm -rf '\(fs.path)/cache' && (dd if=/dev/zero of='\(fs.path)/filler' bs=64k 2>/dev/null; true)"))
        let c = try serve(env)
        #expect(try Self.get(c.port, first).headers["x-cache"] == "MISS")
        #expect(try Self.get(c.port, "/readyz").text.contains("serving uncached"))
        #expect(shell("rm '\(fs.path)/filler'"))
        usleep(300_000)
        #expect(try Self.get(c.port, first).headers["x-cache"] == "MISS")
        #expect(try Self.get(c.port, first).headers["x-cache"] == "HIT")
    }

    /// 7: a TLS ClientHello or bare CRs are answered 400 at once, not after the 10 s
    /// header timeout.
    @Test(arguments: [
        ("TLS ClientHello", [0x16, 0x03, 0x01, 0x00, 0xA5, 0x01, 0x00, 0x00, 0xA1, 0x03, 0x03] as [UInt8]),
        ("bare CRs", [UInt8](repeating: 0x0D, count: 8)),
    ])
    func bytesThatAreNotHTTPAreAnsweredAtOnce(_ name: String, _ bytes: [UInt8]) throws {
        let s = try serve()
        let c = try TestClient(port: s.port)
        let start = Date()
        try c.send(bytes)
        let r = try c.response()
        let seconds = Date().timeIntervalSince(start)
        #expect(r.status == 400, "\(name)")
        #expect(seconds < 2, "\(name): answered after \(seconds) s (the header timeout is 10 s)")
    }

    /// 8: with log.format=json every line the server writes parses as JSON, libvips'
    /// warnings (an AVIF's nclx profile, a truncated JPEG) among them.
    @Test func underAJSONLogEveryLineIsJSON() throws {
        let s = try serve(["ASPECT_LOG_FORMAT": "json", "ASPECT_LOG_ACCESS": "true"])
        let avif = try Self.get(s.port, "/thumb?src=landscape.jpg&w=200&format=avif")
        #expect(avif.status == 200)
        try Data(avif.body).write(to: images.appendingPathComponent("made.avif"))
        let jpeg = try Data(contentsOf: images.appendingPathComponent("landscape.jpg"))
        try jpeg.prefix(jpeg.count / 3).write(to: images.appendingPathComponent("cut.jpg"))
        #expect(try Self.get(s.port, "/thumb?src=made.avif&w=50&format=jpeg").status == 200)
        #expect(try Self.get(s.port, "/thumb?src=cut.jpg&w=50").status == 415)
        #expect(try Self.get(s.port, "/thumb?w=abc").status == 400)
        s.signal(SIGTERM)
        #expect(s.wait(seconds: 15) == 0)
        let errors = s.errors
        let lines = (s.output + errors).split(separator: "\n").filter { !$0.isEmpty }
        #expect(lines.count >= 6)
        for line in lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object != nil, "not a JSON object: \(line)")
        }
        #expect(errors.contains(#""source":"VIPS""#), "libvips' warnings are in the log: \(errors)")
        // libvips says it five times for one render; the log says it once.
        #expect(errors.components(separatedBy: "ignoring nclx profile").count - 1 == 1, "\(errors)")
    }

    func cpuTicks(_ pid: Int32) throws -> Int {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // Fields after the command (which may hold spaces) start after its ')'.
        guard let close = stat.lastIndex(of: ")") else { throw TestError("no /proc stat") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after ')'.
        return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    }

    func shell(_ command: String) -> Bool {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", command]
        p.currentDirectoryURL = dir
        do { try p.run() } catch { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }
}
