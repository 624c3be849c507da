import Foundation
import Glibc
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
        "create IMAGES/planted.jpg", "create /tmp/aspect-planted", "read /proc/SERVICE/status",
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
