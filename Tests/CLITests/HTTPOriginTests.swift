import Core
import Foundation
import Glibc
import Synchronization
import TestSupport
import Testing

/// `aspect serve` with `images.root` at an HTTP origin on loopback (TestOrigin), the real
/// binary, libcurl and libvips: every answer an origin can give, and what the service
/// makes of it.
@Suite(.serialized) struct HTTPOriginTests {
    let dir: URL
    let origin: TestOrigin
    /// The sample images, by name, as the folder root serves them.
    let samples: [String: [UInt8]]

    init() throws {
        dir = try ServeProcess.sampleFolder("origin")
        origin = try TestOrigin()
        var samples: [String: [UInt8]] = [:]
        for name in ["landscape.jpg", "portrait.jpg", "logo.png"] {
            let bytes = try [UInt8](Data(contentsOf: dir.appendingPathComponent("images/\(name)")))
            samples[name] = bytes
            origin.put(name, bytes)
        }
        self.samples = samples
    }

    func serve(_ env: [String: String] = [:], cache: String = "cache") throws -> ServeProcess {
        try ServeProcess(
            dir: dir,
            env: [
                "ASPECT_IMAGES_ROOT": origin.base, "ASPECT_CACHE_DIR": cache, "ASPECT_LOG_ACCESS": "false",
                "ASPECT_SOURCES_TIMEOUTMS": "3000",
            ].merging(env) { $1 })
    }

    /// Files in the source cache: whole bodies (`.src`) and anything temporary left behind.
    func sourceCache(_ cache: String = "cache") -> (bodies: [String], temporary: [String]) {
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("\(cache)/sources").path))
            ?? []
        return (names.filter { $0.hasSuffix(".src") }, names.filter { $0.hasPrefix(".tmp-") })
    }

    /// The same bytes as from a folder: every mode and format, each source fetched once.
    @Test func everyModeAndFormatAsFromAFolder() throws {
        let remote = try serve()
        let local = try ServeProcess(samples: dir, env: ["ASPECT_CACHE_DIR": "cache-local"])
        for src in samples.keys.sorted() {
            for mode in Mode.allCases {
                for format in ["jpeg", "png", "webp", "avif"] {
                    let target = "/thumb?src=files/\(src)&w=120&ratio=4:3&mode=\(mode.rawValue)&format=\(format)"
                    let r = try ServiceTests.get(remote.port, target)
                    let l = try ServiceTests.get(local.port, target.replacingOccurrences(of: "files/", with: ""))
                    #expect(r.status == 200 && l.status == 200, "\(target): \(r.text)")
                    #expect(r.body == l.body, "\(target): the origin's result differs from the folder's")
                    #expect(r.headers["content-type"] == "image/\(format)")
                }
            }
            #expect(origin.requests("/files/\(src)") == 1, "\(src) was downloaded once for 16 results")
        }
        #expect(sourceCache().temporary.isEmpty)
    }

    /// Five sizes of a new source at once: one download, the others wait for it.
    @Test func fiveSizesOfANewSourceCostOneDownload() throws {
        let s = try serve()
        let group = DispatchGroup()
        let statuses = Mutex<[Int]>([])
        let port = s.port
        for w in [100, 150, 200, 250, 300] {
            group.enter()
            DispatchQueue.global().async {
                defer { group.leave() }
                let r = try? ServiceTests.get(port, "/thumb?src=files/portrait.jpg&w=\(w)")
                statuses.withLock { $0.append(r?.status ?? 0) }
            }
        }
        group.wait()
        #expect(statuses.withLock { $0 } == [200, 200, 200, 200, 200])
        #expect(origin.requests("/files/portrait.jpg") == 1)
        let metrics = try ServiceTests.get(s.port, "/metrics").text
        #expect(metrics.contains(#"aspect_source_fetches_total{outcome="downloaded"} 1"#), "\(metrics)")
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let src: String
        let status: Int
        let code: String
        let message: String
        var testDescription: String { src }
    }

    static let cases: [Case] = [
        Case(src: "status/404/landscape.jpg", status: 404, code: "not_found", message: "the origin answered 404"),
        Case(src: "status/410/landscape.jpg", status: 404, code: "not_found", message: "the origin answered 410"),
        Case(src: "status/500/landscape.jpg", status: 502, code: "upstream_error", message: "the origin answered 500"),
        Case(src: "status/503/landscape.jpg", status: 502, code: "upstream_error", message: "the origin answered 503"),
        Case(src: "status/403/landscape.jpg", status: 502, code: "upstream_error", message: "the origin answered 403"),
        Case(src: "redirect/2/landscape.jpg", status: 200, code: "", message: ""),
        Case(src: "redirect/5/landscape.jpg", status: 502, code: "upstream_error", message: "sources.maxRedirects"),
        Case(src: "away/landscape.jpg", status: 502, code: "upstream_error", message: "another host"),
        Case(src: "loop/landscape.jpg", status: 502, code: "upstream_error", message: "sources.maxRedirects"),
        Case(src: "stall-head/landscape.jpg", status: 504, code: "upstream_timeout", message: "sources.timeoutMs"),
        Case(src: "stall-body/landscape.jpg", status: 504, code: "upstream_timeout", message: "sources.timeoutMs"),
        Case(src: "close-mid/landscape.jpg", status: 502, code: "upstream_error", message: "closed the connection"),
        Case(src: "over-length/landscape.jpg", status: 200, code: "", message: ""),
        Case(src: "endless/landscape.jpg", status: 413, code: "source_too_large", message: "limits.maxSourceBytes"),
    ]

    /// Each way an origin fails gives its status and a message that says what happened;
    /// nothing partial is kept, and the service serves on.
    @Test func everyOriginFailureHasItsStatus() throws {
        let s = try serve(["ASPECT_SOURCES_TIMEOUTMS": "1500", "ASPECT_LIMITS_MAXSOURCEBYTES": "2MB"])
        for c in Self.cases {
            let r = try ServiceTests.get(s.port, "/thumb?src=\(c.src)&w=100")
            #expect(r.status == c.status, "\(c.src): \(r.text)")
            if c.status != 200 {
                #expect(r.text.contains(#""code": "\#(c.code)""#) && r.text.contains(c.message), "\(c.src): \(r.text)")
            }
            let after = try ServiceTests.get(s.port, "/thumb?src=files/landscape.jpg&w=\(100 + Self.cases.count)")
            #expect(after.status == 200, "after \(c.src) the service serves on")
        }
        // Only whole sources are kept: landscape.jpg as itself, and the two that arrived
        // whole through a redirect and past their Content-Length; no temporary file.
        let kept = sourceCache()
        #expect(kept.bodies.count == 3, "\(kept.bodies)")
        #expect(kept.temporary.isEmpty)
        let metrics = try ServiceTests.get(s.port, "/metrics").text
        for outcome in ["not_found", "error", "timeout", "too_large"] {
            #expect(!metrics.contains(#"aspect_source_fetches_total{outcome="\#(outcome)"} 0"#), "\(outcome)")
        }
    }

    @Test func aRefusedConnectionIs502AndReadinessDoesNotDependOnTheOrigin() throws {
        // A port nothing listens on: bound, then closed.
        let gone = try TestOrigin()
        let port = gone.port
        gone.stop()
        let s = try serve(["ASPECT_IMAGES_ROOT": "http://127.0.0.1:\(port)/"])
        let r = try ServiceTests.get(s.port, "/thumb?src=a.jpg&w=100")
        #expect(r.status == 502 && r.text.contains("refused the connection"), "\(r.text)")
        #expect(try ServiceTests.get(s.port, "/readyz").status == 200)
    }

    /// TLS certificates are verified: an origin whose CA no store trusts is a 502 that
    /// says so, until `sources.caFile` names that CA.
    @Test func tlsIsVerifiedAndCaFileAddsATrustedCA() throws {
        let tls = dir.appendingPathComponent("tls")
        try FileManager.default.createDirectory(
            at: tls.appendingPathComponent("files"), withIntermediateDirectories: true)
        try Data(samples["logo.png"] ?? []).write(to: tls.appendingPathComponent("files/logo.png"))
        let placeholder = try TestOrigin()
        let port = placeholder.port  // free a moment ago
        placeholder.stop()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = [
            Binary.repositoryRoot.appendingPathComponent("Tests/Helpers/tls-origin.sh").path, tls.path, "\(port)",
        ]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer {
            // SIGKILL: a child of the test process inherits its blocked SIGTERM (the
            // in-process servers take their signals by signalfd).
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(20)
        while (try? TestClient(port: port)) == nil, Date() < deadline { usleep(100_000) }
        let root = "https://127.0.0.1:\(port)/"
        let untrusted = try serve(["ASPECT_IMAGES_ROOT": root])
        let refused = try ServiceTests.get(untrusted.port, "/thumb?src=logo.png&w=64")
        #expect(
            refused.status == 502 && refused.text.contains("TLS certificate could not be verified"), "\(refused.text)")
        let trusted = try serve([
            "ASPECT_IMAGES_ROOT": root, "ASPECT_SOURCES_CAFILE": tls.appendingPathComponent("ca.pem").path,
            "ASPECT_CACHE_DIR": "cache-tls",
        ])
        let served = try ServiceTests.get(trusted.port, "/thumb?src=logo.png&w=64")
        #expect(served.status == 200 && served.headers["content-type"] == "image/png", "\(served.text)")
    }

    /// Through the binary, with every request due a check (`sources.revalidateSeconds` 0,
    /// `sources.staleSeconds` 0): one conditional request decides, a 304 keeps the copy
    /// and the result cache hits, a new ETag brings the new object and a new result. The
    /// window itself, and the stale time, are RemoteSourceTests', on a test clock.
    @Test func aChangedObjectIsServedChangedOnceTheCheckSaysSo() throws {
        let s = try serve(["ASPECT_SOURCES_REVALIDATESECONDS": "0", "ASPECT_SOURCES_STALESECONDS": "0"])
        origin.put("swap.jpg", samples["landscape.jpg"] ?? [])
        let first = try ServiceTests.get(s.port, "/thumb?src=files/swap.jpg&w=90")
        #expect(first.status == 200 && origin.requests("/files/swap.jpg") == 1)
        // Unchanged: a 304, and the result cache still hits.
        let same = try ServiceTests.get(s.port, "/thumb?src=files/swap.jpg&w=90")
        #expect(same.headers["x-cache"] == "HIT" && same.headers["etag"] == first.headers["etag"])
        #expect(origin.requests("/files/swap.jpg", conditional: true) == 1)
        // Changed at the origin: the next request has the new one.
        origin.put("swap.jpg", samples["portrait.jpg"] ?? [])
        let changed = try ServiceTests.get(s.port, "/thumb?src=files/swap.jpg&w=90")
        #expect(changed.status == 200 && changed.headers["etag"] != first.headers["etag"])
        #expect(origin.requests("/files/swap.jpg") == 3)
        // The new one is portrait: 90 wide is taller than the landscape's 60.
        #expect(changed.body != first.body)
    }

    /// Polls `done` every 20 ms for up to 10 s.
    static func waitUntil(_ done: () -> Bool) throws {
        for _ in 0..<500 {
            if done() { return }
            usleep(20_000)
        }
        Issue.record("not reached in 10 s")
    }

    /// The source cache survives a restart: a known source is checked with one
    /// conditional request (304), not downloaded again.
    @Test func theSourceCacheIsRebuiltOnStart() throws {
        do {
            let s = try serve()
            #expect(try ServiceTests.get(s.port, "/thumb?src=files/logo.png&w=80").status == 200)
            s.signal(SIGTERM)
            _ = s.wait(seconds: 10)
        }
        let again = try serve()
        #expect(try ServiceTests.get(again.port, "/thumb?src=files/logo.png&w=81").status == 200)
        #expect(origin.requests("/files/logo.png") == 2 && origin.requests("/files/logo.png", conditional: true) == 1)
    }

    /// 200 requests waiting on a stalled origin hold no image worker: an already-fetched
    /// source's misses and hits are all served while they still wait.
    @Test func aStalledOriginHoldsUpNothingElse() throws {
        raiseFileLimit(4096)
        let s = try serve([
            "ASPECT_SOURCES_TIMEOUTMS": "20000", "ASPECT_SERVER_WORKERS": "2", "ASPECT_SERVER_QUEUEDEPTH": "8",
        ])
        #expect(try ServiceTests.get(s.port, "/thumb?src=files/landscape.jpg&w=50").status == 200)
        var stalled: [TestClient] = []
        for i in 0..<200 {
            let c = try TestClient(port: s.port, timeoutSeconds: 60)
            try c.send(TestClient.get("/thumb?src=stall-head/\(i).jpg&w=100"))
            stalled.append(c)
        }
        usleep(300_000)
        for w in 60..<80 {
            let miss = try ServiceTests.get(s.port, "/thumb?src=files/landscape.jpg&w=\(w)")
            #expect(miss.status == 200 && miss.headers["x-cache"] == "MISS")
            let hit = try ServiceTests.get(s.port, "/thumb?src=files/landscape.jpg&w=\(w)")
            #expect(hit.status == 200 && hit.headers["x-cache"] == "HIT")
        }
        let metrics = try ServiceTests.get(s.port, "/metrics").text
        #expect(metrics.contains("aspect_source_fetches_in_flight 16"), "the 16 fetch slots are all still waiting")
        #expect(stalled.allSatisfy { !$0.hasInput }, "no stalled request was answered meanwhile")
        origin.stop()
    }
}
