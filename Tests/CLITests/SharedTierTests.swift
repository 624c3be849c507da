import Foundation
import Glibc
import TestSupport
import Testing

/// `cache.shared` against moto's S3 server (SPEC: Shared results and purging): replicas
/// with folders of their own sharing one result tier, through the real binary.
@Suite(.serialized) struct SharedTierTests {
    let dir: URL
    let moto: MotoServer
    let prefix = "results-\(UUID().uuidString.prefix(8))/"

    init() throws {
        moto = try MotoServer.shared.get()
        dir = try ServeProcess.sampleFolder("shared")
    }

    /// A replica on the sample folder, its own cache, the shared tier in moto.
    func replica(_ name: String, _ env: [String: String] = [:]) throws -> ServeProcess {
        try ServeProcess(
            samples: dir,
            env: moto.clientEnvironment.merging([
                "ASPECT_CACHE_DIR": "cache-\(name)", "ASPECT_CACHE_SHARED": "s3://\(moto.bucket)/\(prefix)",
                "ASPECT_SECURITY_ADMINTOKEN": "admin-token-1234",
            ]) { $1 }.merging(env) { $1 })
    }

    func metric(_ port: Int, _ name: String) throws -> Int {
        let text = try ServiceTests.get(port, "/metrics").text
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Int(line.split(separator: " ").last ?? "") ?? -1
        }
        return 0
    }

    /// Waits (up to 10 s) for the uploads behind the answers to land.
    func settle(_ port: Int, uploads: Int) throws {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let text = try ServiceTests.get(port, "/metrics").text
            if text.contains(#"aspect_shared_uploads_total{outcome="ok"} \#(uploads)"#) { return }
            usleep(50_000)
        }
        throw TestError("the uploads did not land: \(try ServiceTests.get(port, "/metrics").text)")
    }

    @Test func aSecondReplicaServesWhatTheFirstRendered() throws {
        let a = try replica("a")
        let target = "/thumb?src=landscape.jpg&w=240&format=webp"
        let made = try ServiceTests.get(a.port, target)
        #expect(made.status == 200 && made.headers["x-cache"] == "MISS")
        try settle(a.port, uploads: 2)  // the result and the /info it left behind
        // A new replica, an empty disk: served from the shared tier, not rendered.
        let b = try replica("b")
        let shared = try ServiceTests.get(b.port, target)
        #expect(shared.headers["x-cache"] == "HIT", "\(shared.headers)")
        #expect(shared.body == made.body && shared.headers["etag"] == made.headers["etag"])
        #expect(try metric(b.port, "aspect_renders_total") == 0)
        #expect(try metric(b.port, "aspect_shared_hits_total") == 1)
        // Now local to b: the next one does not ask the shared tier.
        #expect(try ServiceTests.get(b.port, target).headers["x-cache"] == "HIT")
        #expect(try metric(b.port, "aspect_shared_hits_total") == 1)
        // /info answers travel too.
        #expect(try ServiceTests.get(b.port, "/info?src=landscape.jpg").headers["x-cache"] == "HIT")
        #expect(try metric(b.port, "aspect_renders_total") == 0)

        // A purge on b removes its own copies and the shared ones; a third replica renders again.
        let c = try TestClient(port: b.port, timeoutSeconds: 30)
        try c.send(
            "POST /purge?src=landscape.jpg HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer admin-token-1234\r\nContent-Length: 0\r\n\r\n"
        )
        let purged = try c.response()
        #expect(purged.status == 200 && purged.text == "{\"purged\": 2}\n", "\(purged.text)")
        let fresh = try replica("c")
        #expect(try ServiceTests.get(fresh.port, target).headers["x-cache"] == "MISS")
        #expect(try metric(fresh.port, "aspect_renders_total") == 1)
    }

    /// A tier that cannot be reached: misses are still rendered and served, nothing 5xx;
    /// the failed uploads are counted.
    @Test func anUnreachableTierNeverFailsAnAnswer() throws {
        let s = try replica(
            "down", ["ASPECT_S3_ENDPOINT": "http://127.0.0.1:9", "ASPECT_SOURCES_CONNECTTIMEOUTMS": "200"])
        for w in [100, 120, 140] {
            let r = try ServiceTests.get(s.port, "/thumb?src=portrait.jpg&w=\(w)")
            #expect(r.status == 200 && r.headers["x-cache"] == "MISS")
        }
        #expect(try ServiceTests.get(s.port, "/thumb?src=portrait.jpg&w=100").headers["x-cache"] == "HIT")
        let deadline = Date().addingTimeInterval(10)
        var failed = 0
        while Date() < deadline, failed < 4 {
            failed =
                try ServiceTests.get(s.port, "/metrics").text.contains(
                    #"aspect_shared_uploads_total{outcome="failed"} 4"#) ? 4 : 0
            usleep(50_000)
        }
        #expect(failed == 4, "three results and one /info, each upload failed and counted")
    }
}

/// A moto server of this suite's own, without authentication, that can be stopped and
/// started again on its port (its state, the bucket included, goes with it).
final class PrivateMoto {
    let port: Int
    private var process: Process?
    var endpoint: String { "http://127.0.0.1:\(port)" }

    init() throws {
        port = MotoServer.freePort()
        try start()
    }

    func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "\(MotoServer.venv)/bin/moto_server")
        p.arguments = ["-H", "127.0.0.1", "-p", "\(port)"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        process = p
        let deadline = Date().addingTimeInterval(30)
        while (try? TestClient(port: port)) == nil {
            guard Date() < deadline else { throw TestError("moto_server did not start") }
            usleep(100_000)
        }
        // The bucket, made anew (moto keeps nothing across a restart).
        let c = try TestClient(port: port, timeoutSeconds: 10)
        try c.send("PUT /tier HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Length: 0\r\n\r\n")
        _ = try c.response()
    }

    func stop() {
        guard let p = process else { return }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        process = nil
    }

    deinit { stop() }
}

extension SharedTierTests {
    /// moto stopped mid-run: misses are still rendered and served (no 5xx), the failed
    /// uploads counted; started again, uploads land again and a new replica is served
    /// from the tier.
    @Test func theTierGoingAwayAndComingBack() throws {
        let s3 = try PrivateMoto()
        let env = [
            "ASPECT_CACHE_SHARED": "s3://tier/results/", "ASPECT_S3_ENDPOINT": s3.endpoint,
            "ASPECT_SOURCES_CONNECTTIMEOUTMS": "300", "ASPECT_SOURCES_TIMEOUTMS": "2000",
        ]
        let a = try replica("gone-a", env)
        #expect(try ServiceTests.get(a.port, "/thumb?src=logo.png&w=100").status == 200)
        try settle(a.port, uploads: 2)
        s3.stop()
        for w in [110, 120] {
            let r = try ServiceTests.get(a.port, "/thumb?src=logo.png&w=\(w)")
            #expect(r.status == 200 && r.headers["x-cache"] == "MISS", "\(r.status)")
        }
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline,
            !(try ServiceTests.get(a.port, "/metrics").text.contains(
                #"aspect_shared_uploads_total{outcome="failed"} 2"#))
        {
            usleep(50_000)
        }
        #expect(
            try ServiceTests.get(a.port, "/metrics").text.contains(#"aspect_shared_uploads_total{outcome="failed"} 2"#))
        try s3.start()
        #expect(try ServiceTests.get(a.port, "/thumb?src=logo.png&w=130").status == 200)
        try settle(a.port, uploads: 3)
        let b = try replica("gone-b", env)
        let served = try ServiceTests.get(b.port, "/thumb?src=logo.png&w=130")
        let renders = try metric(b.port, "aspect_renders_total")
        #expect(served.headers["x-cache"] == "HIT" && renders == 0)
    }
}
