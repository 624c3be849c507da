import Foundation
import Imaging
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

    @Test func sigtermLetsInFlightRequestsFinishRefusesNewOnesAndExitsZero() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let serve = try ServeProcess(dir: dir, env: ["ASPECT_IMAGES_ROOT": "images", "ASPECT_SERVER_WORKERS": "2"])
        let clients = try (0..<6).map { _ in try TestClient(port: serve.port, timeoutSeconds: 30) }
        for (i, c) in clients.enumerated() { try c.send(TestClient.get("/thumb?src=slow.png&w=\(100 + i)&format=png")) }
        usleep(100_000)
        serve.signal(SIGTERM)
        usleep(100_000)
        #expect(throws: TestError.self, "new connections are refused while draining") {
            _ = try TestClient(port: serve.port)
        }
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
}
