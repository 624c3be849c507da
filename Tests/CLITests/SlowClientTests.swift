import Foundation
import Imaging
import TestSupport
import Testing

/// A table full of slow clients through the binary (issue 44): with
/// `server.maxConnections=64`, 128 idle keep-alive connections, 128 dribbling heads and
/// 128 slow readers, each in turn: a new client is answered 200 within a second every
/// time, the server's memory stays flat, and the shed counters move.
@Suite(.serialized) struct SlowClientTests {
    static let newcomerTarget = "/thumb?src=landscape.jpg&w=120"
    /// Noise does not compress: a 2000×2000 PNG of it is some 12 MB, more than the
    /// kernel's buffers take for a client that reads nothing.
    static let bigTarget = "/thumb?src=noise.png&w=2000&format=png"

    func rss(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// A newcomer's cached answer, and how long it took.
    func newcomer(_ port: Int) throws -> (status: Int, seconds: Double) {
        let start = Date()
        let c = try TestClient(port: port, timeoutSeconds: 5)
        try c.send(TestClient.get(Self.newcomerTarget))
        let r = try c.response()
        return (r.status, Date().timeIntervalSince(start))
    }

    func shed(_ port: Int, _ reason: String) throws -> Int {
        let text = try ServiceTests.get(port, "/metrics").text
        let line = text.split(separator: "\n").first {
            $0.hasPrefix("aspect_connections_shed_total{reason=\"\(reason)\"}")
        }
        return Int(line?.split(separator: " ").last ?? "") ?? -1
    }

    @Test func slowClientsAreShedForNewcomers() throws {
        let dir = try ServeProcess.sampleFolder("slow")
        var random = SystemRandomNumberGenerator()
        let noise = RawImage(
            width: 2000, height: 2000, bands: 3,
            pixels: (0..<(2000 * 2000 * 3)).map { _ in UInt8.random(in: 0...255, using: &random) })
        try Data(try ImageFile.encode(noise, as: .png)).write(to: dir.appendingPathComponent("images/noise.png"))
        let server = try ServeProcess(
            samples: dir, env: ["ASPECT_SERVER_MAXCONNECTIONS": "64", "ASPECT_SERVER_EVENTLOOPS": "1"])
        let port = server.port
        let pid = server.process.processIdentifier
        // Both answers cached first: the newcomers and the slow readers ask for hits.
        #expect(try ServiceTests.get(port, Self.newcomerTarget).status == 200)
        let big = try ServiceTests.get(port, Self.bigTarget)
        #expect(big.status == 200 && big.body.count > 8 << 20, "\(big.body.count) bytes")
        let before = rss(pid)
        // Sampled while each crowd is held, not after it is let go.
        var peak = before

        // 128 idle keep-alive connections, each after an answer.
        var idle: [TestClient] = []
        for _ in 0..<128 {
            let c = try TestClient(port: port)
            try c.send(TestClient.get("/healthz"))
            if (try? c.response())?.status == 200 { idle.append(c) }
        }
        let afterIdle = try newcomer(port)
        #expect(afterIdle.status == 200 && afterIdle.seconds < 1, "\(afterIdle)")
        #expect(try shed(port, "idle") >= 64)
        peak = max(peak, rss(pid))
        idle.removeAll()

        // 128 heads dribbling in.
        var heads: [TestClient] = []
        for _ in 0..<128 {
            let c = try TestClient(port: port)
            try c.send(Array("GET /thumb?src=landsc".utf8))
            heads.append(c)
        }
        usleep(200_000)
        let afterHeads = try newcomer(port)
        #expect(afterHeads.status == 200 && afterHeads.seconds < 1, "\(afterHeads)")
        #expect(try shed(port, "slow_head") >= 64)
        peak = max(peak, rss(pid))
        heads.removeAll()

        // 128 readers that take nothing of a large answer.
        var readers: [TestClient] = []
        for _ in 0..<128 {
            let c = try TestClient(port: port, receiveBuffer: 4096)
            try c.send(TestClient.get(Self.bigTarget))
            readers.append(c)
        }
        // Stalled for over a second: below the floor.
        usleep(1_500_000)
        for _ in 0..<3 {
            let r = try newcomer(port)
            #expect(r.status == 200 && r.seconds < 1, "\(r)")
        }
        #expect(try shed(port, "slow_read") >= 1)
        peak = max(peak, rss(pid))
        readers.removeAll()

        #expect(peak - before < 64 * 1024, "RSS \(before) kB before, \(peak) kB at most while the clients were held")
    }
}
