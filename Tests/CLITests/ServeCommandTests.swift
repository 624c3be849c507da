import Foundation
import Imaging
import ImagingTestSupport
import TestSupport
import Testing

/// `aspect serve` as a user runs it: a real process, real signals.
@Suite struct ServeCommandTests {
    static func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aspect-serve-\(UUID().uuidString)")
        let images = dir.appendingPathComponent("images")
        try FileManager.default.createDirectory(at: images, withIntermediateDirectories: true)
        // A 3000×2000 PNG: no shrink-on-load, so each thumbnail takes a while to decode.
        var pixels = [UInt8](repeating: 0, count: 3000 * 2000 * 3)
        for i in 0..<pixels.count { pixels[i] = UInt8(truncatingIfNeeded: i / 7) }
        let png = try ImageFile.encode(RawImage(width: 3000, height: 2000, bands: 3, pixels: pixels), as: .png)
        try Data(png).write(to: images.appendingPathComponent("slow.png"))
        return dir
    }

    /// The names of the server's threads, from /proc.
    static func threadNames(_ pid: Int32) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    /// Pools start their threads with their first job: a folder root never starts a fetch
    /// or a re-check thread, and the image workers start as work comes.
    @Test func aFolderRootStartsNoFetchThreads() throws {
        let dir = try ServeProcess.sampleFolder("threads")
        let s = try ServeProcess(samples: dir, env: ["ASPECT_SERVER_WORKERS": "4"])
        let before = Self.threadNames(s.process.processIdentifier)
        #expect(!before.isEmpty && !before.contains { $0.hasPrefix("aspect-worker") }, "\(before)")
        #expect(try ServiceTests.get(s.port, "/thumb?src=landscape.jpg&w=50").status == 200)
        let after = Self.threadNames(s.process.processIdentifier)
        #expect(after.contains { $0.hasPrefix("aspect-worker") }, "\(after)")
        #expect(!after.contains { $0.hasPrefix("aspect-fetch") || $0.hasPrefix("aspect-recheck") }, "\(after)")
    }

    @Test func sigtermLetsInFlightRequestsFinishRefusesNewOnesAndExitsZero() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let serve = try ServeProcess(dir: dir, env: ["ASPECT_IMAGES_ROOT": "images", "ASPECT_SERVER_WORKERS": "2"])
        let clients = try (0..<6).map { _ in try TestClient(port: serve.port, timeoutSeconds: 30) }
        for (i, c) in clients.enumerated() { try c.send(TestClient.get("/thumb?src=slow.png&w=\(100 + i)&format=png")) }
        // In flight means read by the server: rendering, queued or answered (a connection
        // whose request was not read yet is idle, and the drain closes idle ones).
        let inFlight = [
            "aspect_workers_busy", "aspect_queue_depth", #"aspect_requests_total{route="/thumb",status="200"}"#,
        ]
        try ServiceTests.waitForMetrics(serve.port) { ServiceTests.sum($0, inFlight) >= 6 }
        serve.signal(SIGTERM)
        // Refused once the signal is handled: asked until then, at most 5 s.
        var refused = false
        for _ in 0..<100 where !refused {
            usleep(50_000)
            refused = (try? TestClient(port: serve.port)) == nil
        }
        #expect(refused, "new connections are refused while draining")
        for (i, c) in clients.enumerated() {
            let r = try c.response()
            #expect(r.status == 200, "in-flight request \(i): \(r.status) \(r.text)")
            #expect(try ImageFile.decode(r.body).width == 100 + i)
            // Answered before the signal or after: either way the drain closes it.
            #expect(c.closedByPeer())
        }
        #expect(serve.wait(seconds: 10) == 0)
    }

    @Test func sigintStopsAnIdleServerAtOnce() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let serve = try ServeProcess(dir: dir, env: ["ASPECT_IMAGES_ROOT": "images"])
        let c = try TestClient(port: serve.port)
        try c.send(TestClient.get("/healthz"))
        #expect(try c.response().text == "ok\n")
        let start = Date()
        serve.signal(SIGINT)
        #expect(serve.wait(seconds: 5) == 0)
        #expect(Date().timeIntervalSince(start) < 2)
    }

    @Test func theAccessLogIsOneJSONLinePerRequest() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let serve = try ServeProcess(dir: dir, env: ["ASPECT_IMAGES_ROOT": "images", "ASPECT_LOG_FORMAT": "json"])
        let c = try TestClient(port: serve.port)
        try c.send(TestClient.get("/healthz") + TestClient.get("/thumb?src=slow.png&w=abc"))
        _ = try c.response()
        _ = try c.response()
        serve.signal(SIGTERM)
        #expect(serve.wait(seconds: 5) == 0)
        let lines = serve.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(lines)")
        let entries = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(entries[0]?["method"] as? String == "GET" && entries[0]?["target"] as? String == "/healthz")
        #expect(entries[0]?["status"] as? Int == 200 && entries[0]?["bytes"] as? Int == 3)
        #expect(entries[1]?["status"] as? Int == 400 && entries[1]?["ms"] is Double)
        #expect(entries[1]?["time"] is String)
    }

    @Test func aBusyPortIsAClearError() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let first = try ServeProcess(dir: dir, env: ["ASPECT_IMAGES_ROOT": "images"])
        let second = try Binary.run(["serve", "--port", "\(first.port)", "--images", "images"], cwd: dir)
        #expect(second.status == 1)
        #expect(second.stderr.contains("cannot listen on 127.0.0.1:\(first.port)"), "\(second.stderr)")
    }

    @Test func healthcheckSaysWhetherTheConfiguredServiceAnswers() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let serve = try ServeProcess(dir: dir, env: ["ASPECT_IMAGES_ROOT": "images"])
        // The port by flag, and by the same environment variable the service reads.
        let byFlag = try Binary.run(["healthcheck", "--port", "\(serve.port)"], cwd: dir)
        #expect(byFlag.status == 0, "\(byFlag.stderr)")
        let byEnv = try Binary.run(["healthcheck"], env: ["ASPECT_SERVER_PORT": "\(serve.port)"], cwd: dir)
        #expect(byEnv.status == 0, "\(byEnv.stderr)")
        // A service listening on every address is asked on loopback.
        let anyHost = try Binary.run(["healthcheck", "--host", "0.0.0.0", "--port", "\(serve.port)"], cwd: dir)
        #expect(anyHost.status == 0, "\(anyHost.stderr)")
        serve.signal(SIGTERM)
        #expect(serve.wait(seconds: 10) == 0)
        let gone = try Binary.run(["healthcheck", "--port", "\(serve.port)"], cwd: dir)
        #expect(gone.status == 1)
        #expect(gone.stderr.contains("/healthz: cannot connect"), "\(gone.stderr)")
    }

    /// The soft open-file limit of process `pid`, from /proc.
    static func hardOpenFileLimit(_ pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") })
        else { return nil }
        return line.split(separator: " ").compactMap { Int($0) }.dropFirst().first
    }

    static func softOpenFileLimit(_ pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") })
        else { return nil }
        return line.split(separator: " ").compactMap { Int($0) }.first
    }

    @Test func theOpenFileLimitIsRaisedToFitConnectionsAndHeldFilesOrAWarningSaysWhy() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let aspect = Binary.built("aspect").path
        // A soft limit of 300 under a higher hard one: raised to the hard one (issue 44),
        // and server.maxConnections sized from it.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "ulimit -Sn 300 && exec '\(aspect)' serve --port 0 --images images --cache-dir cache"]
        p.currentDirectoryURL = dir
        p.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ASPECT_") }
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer {
            p.terminate()
            p.waitUntilExit()
        }
        var soft: Int?
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            soft = Self.softOpenFileLimit(p.processIdentifier)
            if let s = soft, s != 300, s != Self.softOpenFileLimit(getpid()) { break }
            usleep(50_000)
        }
        let hard = Self.hardOpenFileLimit(p.processIdentifier)
        #expect(
            soft != nil && soft == hard, "soft open-file limit of the server: \(soft.map(String.init) ?? "unknown")")
        // A hard limit too low: the server says which keys to lower (then fails on the busy port).
        let busy = try ServeProcess(dir: dir, env: ["ASPECT_IMAGES_ROOT": "images"])
        /// `aspect serve` on the busy port under an open-file limit of `files`: its exit
        /// status and what it said.
        func serveUnder(files: Int, _ env: String = "") throws -> (Int32, String) {
            let sh = Process()
            sh.executableURL = URL(fileURLWithPath: "/bin/sh")
            sh.arguments = [
                "-c",
                "ulimit -Sn \(files) && ulimit -Hn \(files) && \(env) exec '\(aspect)' serve --port \(busy.port) --images images",
            ]
            sh.currentDirectoryURL = dir
            sh.environment = p.environment
            let err = Pipe()
            sh.standardError = err
            try sh.run()
            let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            sh.waitUntilExit()
            return (sh.terminationStatus, text)
        }
        let (status, text) = try serveUnder(files: 400, "ASPECT_SERVER_MAXCONNECTIONS=1024")
        #expect(status == 1)
        #expect(text.contains("open-file limit (400) is below the 2280"), "\(text)")
        // With the default (0), the table is sized from the limit, and said.
        let (_, words) = try serveUnder(files: 2000)
        #expect(words.contains("up to 744 connections (open-file limit 2000, 1256 kept"), "\(words)")
    }
}
