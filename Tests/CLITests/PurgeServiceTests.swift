import Foundation
import TestSupport
import Testing

/// `POST /purge` through the binary, on the disk cache: the index by source kept on disk
/// beside the cache, so a purge after a restart still finds what was kept before it.
@Suite(.serialized) struct PurgeServiceTests {
    let dir: URL

    init() throws { dir = try ServeProcess.sampleFolder("purge") }

    func post(_ port: Int, _ target: String, token: String?) throws -> TestClient.Response {
        let c = try TestClient(port: port, timeoutSeconds: 30)
        let auth = token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
        try c.send("POST \(target) HTTP/1.1\r\nHost: x\r\n\(auth)Content-Length: 0\r\n\r\n")
        return try c.response()
    }

    func files(_ sub: String) -> Int {
        let root = dir.appendingPathComponent(sub)
        let all = FileManager.default.enumerator(atPath: root.path)?.allObjects as? [String] ?? []
        return all.filter { $0.hasSuffix(".jpeg") || $0.hasSuffix(".webp") || $0.hasSuffix(".json") }.count
    }

    @Test func aPurgeAfterARestartRemovesWhatWasKeptBefore() throws {
        let env = ["ASPECT_SECURITY_ADMINTOKEN": "purge-token-123"]
        var server = try ServeProcess(samples: dir, env: env)
        for q in ["w=100", "w=200", "w=150&h=150&mode=fill"] {
            #expect(try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&\(q)&format=jpeg").status == 200)
        }
        _ = try ServiceTests.get(server.port, "/thumb?src=portrait.jpg&w=100&format=jpeg")
        #expect(files("cache") == 6, "three landscape results, their /info, portrait's result and /info")
        server.signal(SIGTERM)
        _ = server.wait(seconds: 10)
        server = try ServeProcess(samples: dir, env: env)
        #expect(try post(server.port, "/purge?src=landscape.jpg", token: "wrong").status == 401)
        let r = try post(server.port, "/purge?src=landscape.jpg", token: "purge-token-123")
        #expect(r.status == 200 && r.text == "{\"purged\": 4}\n", "\(r.text)")
        #expect(files("cache") == 2, "portrait's two remain")
        #expect(
            try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&w=100&format=jpeg").headers["x-cache"] == "MISS"
        )
        #expect(
            try ServiceTests.get(server.port, "/thumb?src=portrait.jpg&w=100&format=jpeg").headers["x-cache"] == "HIT")
        let metrics = try ServiceTests.get(server.port, "/metrics").text
        #expect(metrics.contains(#"route="/purge",status="200""#) && metrics.contains(#"route="/purge",status="401""#))
    }

    /// From an HTTP origin: the purge also removes the source cache's copy, so the next
    /// request downloads the source again (the origin counts a second GET).
    @Test func aPurgeForgetsTheDownloadedSource() throws {
        let origin = try TestOrigin()
        origin.put("landscape.jpg", try [UInt8](Data(contentsOf: dir.appendingPathComponent("images/landscape.jpg"))))
        let server = try ServeProcess(
            dir: dir,
            env: [
                "ASPECT_IMAGES_ROOT": origin.base, "ASPECT_CACHE_DIR": "cache-origin", "ASPECT_LOG_ACCESS": "false",
                "ASPECT_SECURITY_ADMINTOKEN": "purge-token-123",
            ])
        #expect(try ServiceTests.get(server.port, "/thumb?src=files/landscape.jpg&w=100").status == 200)
        let before = origin.requests("/files/landscape.jpg")
        let bodies = {
            (try? FileManager.default.contentsOfDirectory(
                atPath: dir.appendingPathComponent("cache-origin/sources").path))?.filter { $0.hasSuffix(".src") }.count
                ?? 0
        }
        #expect(bodies() == 1)
        let r = try post(server.port, "/purge?src=files/landscape.jpg", token: "purge-token-123")
        #expect(r.status == 200 && r.text == "{\"purged\": 2}\n", "\(r.text)")
        #expect(bodies() == 0)
        #expect(try ServiceTests.get(server.port, "/thumb?src=files/landscape.jpg&w=100").headers["x-cache"] == "MISS")
        #expect(origin.requests("/files/landscape.jpg") > before, "downloaded again")
    }
}
