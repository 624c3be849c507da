import Foundation
import Glibc
import Synchronization
import TestSupport
import Testing

/// A worker taken over by a decoder's exploit holds nothing but its descriptors (SPEC:
/// Isolation; issue 51). Each attack runs as injected code would, inside a real
/// locked-down worker during a real job (the debug build's test hook: a source that begins
/// `ASPECT-ATTACK NAME`), and is denied, or the worker is killed for it.
@Suite(.serialized) struct SandboxAttackTests {
    let dir: URL
    let server: ServeProcess

    init() throws {
        dir = try ServeProcess.sampleFolder("attacks")
        // A configuration with a secret beside the images, as an operator's would be.
        try Data(#"{"security": {"signingKey": "0123456789abcdef-secret"}}"#.utf8).write(
            to: dir.appendingPathComponent("secret.json"))
        server = try ServeProcess(samples: dir, env: ["TESTHOOK_ASPECT_ATTACKS": "1", "ASPECT_SERVER_WORKERS": "2"])
    }

    /// Asks for a render of a source that makes the worker try `attack`.
    func attempt(_ attack: String) throws -> TestClient.Response {
        let name = "attack-\(UUID().uuidString).jpg"
        try Data("ASPECT-ATTACK \(attack)\n".utf8).write(to: dir.appendingPathComponent("images/\(name)"))
        return try ServiceTests.get(server.port, "/thumb?src=\(name)&w=50")
    }

    @Test(arguments: [
        "environ", "mem", "maps", "fd", "read CONFIG", "read /etc/passwd", "create CACHE/planted.jpg",
        "create IMAGES/planted.jpg", "create /tmp/aspect-planted", "read /proc/SERVICE/status", "setown",
    ])
    func filesAreOutOfReach(attack: String) throws {
        let spelled = attack.replacingOccurrences(of: "CONFIG", with: dir.appendingPathComponent("secret.json").path)
            .replacingOccurrences(of: "CACHE", with: dir.appendingPathComponent("cache").path)
            .replacingOccurrences(of: "IMAGES", with: dir.appendingPathComponent("images").path)
            .replacingOccurrences(of: "SERVICE", with: "\(server.process.processIdentifier)")
        let r = try attempt(spelled)
        #expect(r.status == 415 && r.text.contains("denied") && !r.text.contains("SUCCEEDED"), "\(spelled): \(r.text)")
        for planted in ["cache/planted.jpg", "images/planted.jpg"] {
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent(planted).path))
        }
        #expect(!FileManager.default.fileExists(atPath: "/tmp/aspect-planted"))
    }

    /// Calls the allowlist has not: the worker is killed by the kernel for trying, the
    /// service and the other worker live on, and the source is refused after two deaths.
    @Test(arguments: [
        "signal SERVICE", "signal SIBLING", "queue SIBLING", "renice", "affinity", "userfaultfd", "socket",
        "connect",
    ])
    func forbiddenCallsKillTheWorker(attack: String) throws {
        let workers = IsolationTests.workers(of: server, count: 2)
        #expect(workers.count == 2)
        let before = try IsolationTests.restarts(server, "seccomp")
        let service = server.process.processIdentifier
        let spelled = attack.replacingOccurrences(of: "SERVICE", with: "\(service)")
            .replacingOccurrences(of: "SIBLING", with: workers.map(String.init).joined(separator: ","))
        let r = try attempt(spelled)
        #expect(r.status == 422 && r.text.contains("decode_crashed"), "\(spelled): \(r.status) \(r.text)")
        // Killed for it (SIGSYS), both times: the first worker and the fresh one.
        var after = before
        for _ in 0..<200 where after < before + 2 {
            usleep(10_000)
            after = try IsolationTests.restarts(server, "seccomp")
        }
        #expect(after == before + 2, "\(spelled): \(before) → \(after)")
        let health = try ServiceTests.get(server.port, "/healthz").status
        #expect(kill(service, 0) == 0 && health == 200)
        let fine = try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&w=64&format=png")
        #expect(fine.status == 200)
    }

    /// Exactly its four descriptors (0 and 1 /dev/null, 2 a pipe, 3 its socket) and the job's.
    @Test func aWorkerHoldsOnlyWhatItWasHanded() throws {
        let r = try attempt("descriptors")
        #expect(r.status == 415, "\(r.text)")
        let held = r.text.components(separatedBy: "held ").last?.prefix { $0 != "\"" } ?? ""
        let entries = held.split(separator: " ").map(String.init)
        #expect(Array(entries.prefix(4)) == ["0c", "1c", "2p", "3s"], "\(held)")
        #expect(entries.count == 5 && entries.last?.hasSuffix("job") == true, "\(held)")
    }

    /// What holds the workers is said: `/metrics` (the Landlock ABI the kernel gave, the
    /// seccomp allowlist) and `/readyz`'s body.
    @Test func theSandboxIsSaid() throws {
        _ = try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&w=33")
        let metrics = try ServiceTests.get(server.port, "/metrics").text
        let line = metrics.split(separator: "\n").first { $0.hasPrefix("aspect_sandbox_info{") } ?? ""
        #expect(line.contains(#"seccomp="allowlist"} 1"#) && line.contains("landlock=\""), "\(line)")
        let ready = try ServiceTests.get(server.port, "/readyz")
        #expect(ready.status == 200 && ready.text.contains("seccomp allowlist"), "\(ready.text)")
    }

    /// The worker's command line and environment carry no secret.
    @Test func nothingSecretIsHanded() throws {
        let secret = try ServeProcess(
            samples: dir,
            env: [
                "ASPECT_SECURITY_SIGNINGKEY": "0123456789abcdef-secret", "AWS_SECRET_ACCESS_KEY": "aws-secret",
                "ASPECT_S3_SECRETACCESSKEY": "s3-secret",
            ])
        let workers = IsolationTests.workers(of: secret, count: 1)
        #expect(!workers.isEmpty)
        for w in workers {
            let argv = (try? String(contentsOfFile: "/proc/\(w)/cmdline", encoding: .utf8)) ?? ""
            #expect(
                argv.split(separator: "\u{0}") == [
                    "aspect", "render-worker", "--parent", "\(secret.process.processIdentifier)",
                ])
            let environ = (try? String(contentsOfFile: "/proc/\(w)/environ", encoding: .utf8)) ?? ""
            #expect(
                !environ.contains("secret") && !environ.contains("AWS_") && !environ.contains("ASPECT_"), "\(environ)")
        }
    }
}

/// A worker that lies (Tests/Helpers/fake-worker.py, started in place of the real one by
/// the debug build's hook): every answer is distrusted, each lie is a clean 502 for its
/// request, the worker is replaced, and the service's memory stays bounded (issue 51).
@Suite(.serialized) struct LyingWorkerTests {
    @Test func everyLieIsA502AndTheWorkerGoes() throws {
        let dir = try ServeProcess.sampleFolder("liar")
        let fake = Binary.repositoryRoot.appendingPathComponent("Tests/Helpers/fake-worker.py").path
        let server = try ServeProcess(
            samples: dir, env: ["TESTHOOK_ASPECT_WORKER": fake, "ASPECT_SERVER_WORKERS": "2"])
        let pid = server.process.processIdentifier
        func rss() -> Int {
            let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        func ask(_ mode: String) throws -> TestClient.Response {
            let name = "fake-\(mode)-\(UUID().uuidString).jpg"
            try Data("FAKE \(mode)\n".utf8).write(to: dir.appendingPathComponent("images/\(name)"))
            return try ServiceTests.get(server.port, "/thumb?src=\(name)&w=64&h=48&mode=fill&format=png")
        }
        // The fake's honest answer is served: the test's worker speaks the protocol.
        let honest = try ask("honest")
        #expect(
            honest.status == 200 && honest.headers["content-type"] == "image/png", "\(honest.status) \(honest.text)")
        let before = rss()
        var peak = before
        for mode in [
            "huge-size", "nan", "int-max", "sparse", "unsealed", "truncated", "two-fds", "flood", "wrong-size",
            "false-choice",
        ] {
            let protocolBefore = try IsolationTests.restarts(server, "protocol")
            let r = try ask(mode)
            peak = max(peak, rss())
            #expect(r.status == 502 && r.text.contains("worker_protocol"), "\(mode): \(r.status) \(r.text)")
            #expect(try IsolationTests.restarts(server, "protocol") == protocolBefore + 1, "\(mode): not replaced")
            #expect(try ServiceTests.get(server.port, "/healthz").status == 200)
        }
        // A 1 GiB answer was refused by its size, never mapped or copied: a few MiB at most.
        #expect(peak - before < 32 * 1024, "RSS \(before) kB before, \(peak) kB at most")
        #expect(try ask("honest").status == 200)
    }
}

/// Workers killed from outside under load blame no source (issue 51: on e3c3c51 the first
/// kills mid-render were read as "memory" and every new size of every photo was a 413 for
/// five minutes); and a worker started after an origin's keep-alive fetch holds no socket.
@Suite(.serialized) struct OutsideKillTests {
    /// Mixed hits and misses over four sources on 4 connections for 6 s while a worker is
    /// SIGKILLed every 0.3 s: no 413, no 422, every source still rendered after.
    @Test func workersKilledFromOutsideRefuseNoSource() throws {
        let dir = try ServeProcess.sampleFolder("outside-kills")
        let server = try ServeProcess(samples: dir, env: ["ASPECT_SERVER_WORKERS": "2", "ASPECT_LOG_ACCESS": "true"])
        let port = server.port
        let sources = ["landscape.jpg", "portrait.jpg", "logo.png", "square.webp"]
        let statuses = Mutex<[Int: Int]>([:])
        let stop = Atomic<Bool>(false)
        let counter = Atomic<Int>(0)
        let finished = DispatchSemaphore(value: 0)
        for t in 0..<4 {
            Thread {
                while !stop.load(ordering: .relaxed) {
                    let n = counter.add(1, ordering: .relaxed).newValue
                    // Every other request a hit (a fixed size), the rest new sizes.
                    let w = n % 2 == 0 ? 100 : 120 + n % 900
                    let r = try? ServiceTests.get(port, "/thumb?src=\(sources[(n + t) % 4])&w=\(w)&format=jpeg")
                    statuses.withLock { $0[r?.status ?? -1, default: 0] += 1 }
                }
                finished.signal()
            }.start()
        }
        var kills = 0
        let end = Date().addingTimeInterval(6)
        while Date() < end {
            usleep(300_000)
            if let w = IsolationTests.workers(of: server).randomElement() {
                kill(w, SIGKILL)
                kills += 1
            }
        }
        stop.store(true, ordering: .relaxed)
        for _ in 0..<4 { finished.wait() }
        let seen = statuses.withLock { $0 }
        print("OutsideKillTests: \(kills) workers killed, answers \(seen.sorted { $0.key < $1.key })")
        let bad = seen[413] != nil || seen[422] != nil || seen[500] != nil || seen[-1] != nil
        #expect(!bad, "\(seen)")
        if bad {
            // The log's lines for them (the log is read once the service has stopped).
            server.signal(SIGTERM)
            _ = server.wait(seconds: 15)
            let lines = (server.output + server.errors).split(separator: "\n").filter {
                $0.contains(" 500 ") || $0.contains(" 413 ")
            }
            Issue.record("\(lines.prefix(5))")
            return
        }
        // A 503 (worker_lost) only where both tries of a request were killed: a few at most.
        #expect((seen[200] ?? 0) > 20 * (seen[503] ?? 0), "\(seen)")
        for src in sources {
            #expect(try ServiceTests.get(port, "/thumb?src=\(src)&w=77&format=png").status == 200, "\(src) refused")
        }
    }

    @Test func aWorkerStartedAfterAnOriginFetchHoldsNoSocketOfIt() throws {
        let dir = try ServeProcess.sampleFolder("origin-fds")
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.put("landscape.jpg", try [UInt8](Data(contentsOf: dir.appendingPathComponent("images/landscape.jpg"))))
        // A JPEG's first bytes, as the service checks a fetched source's type before a worker.
        origin.put("attack.jpg", [0xFF, 0xD8, 0xFF, 0xE0] + Array(" ASPECT-ATTACK descriptors\n".utf8))
        // One render a worker: the one that answers the second request started after the first fetch.
        let server = try ServeProcess(
            dir: dir,
            env: [
                "ASPECT_IMAGES_ROOT": origin.base, "ASPECT_CACHE_DIR": "cache", "ASPECT_LOG_ACCESS": "false",
                "TESTHOOK_ASPECT_ATTACKS": "1", "ASPECT_SERVER_WORKERJOBS": "1", "ASPECT_SERVER_WORKERS": "1",
            ])
        #expect(try ServiceTests.get(server.port, "/thumb?src=files/landscape.jpg&w=60").status == 200)
        let r = try ServiceTests.get(server.port, "/thumb?src=files/attack.jpg&w=60")
        // The service kept its connection to the origin (one connection for both fetches).
        #expect(origin.connections == 1)
        let held = r.text.components(separatedBy: "held ").last?.prefix { $0 != "\"" } ?? ""
        #expect(r.status == 415 && held.split(separator: " ").map(String.init).prefix(4) == ["0c", "1c", "2p", "3s"])
        #expect(held.split(separator: " ").count == 5, "\(held)")
    }
}
