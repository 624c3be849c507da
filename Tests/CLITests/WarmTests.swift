import Foundation
import Glibc
import TestSupport
import Testing

/// `aspect warm` through the binary (SPEC: Warming and batches; issue 43): a list asked of
/// a running service, `--sources` with parameter lists, retries under a full queue, an
/// interrupted run, and `--offline` into the folder a service then serves.
@Suite(.serialized) struct WarmTests {
    let dir: URL
    static let env = [
        "ASPECT_IMAGES_ROOT": "images", "ASPECT_CACHE_DIR": "cache", "ASPECT_LOG_ACCESS": "false",
        "ASPECT_IMGPROXY_ENABLED": "true", "ASPECT_THUMBOR_ENABLED": "true",
    ]

    init() throws {
        dir = try ServeProcess.sampleFolder("warm")
    }

    func serve(_ env: [String: String] = [:]) throws -> ServeProcess {
        try ServeProcess(dir: dir, env: Self.env.merging(env) { $1 })
    }

    func warm(_ args: [String]) throws -> Binary.Result {
        try Binary.run(["warm"] + args, env: Self.env, cwd: dir)
    }

    /// What warm's requests say they accept (as browsers do), so a `format=auto` result
    /// found is the one it made.
    static let accept = ["Accept": "image/avif,image/webp,*/*"]

    func list(_ name: String, _ lines: [String]) throws -> String {
        let path = dir.appendingPathComponent(name).path
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Every line warmed is then a hit; a 404 among them is written to --failed with its
    /// status, the rest are still warmed, and the exit status is 1.
    @Test func aListIsWarmedAndEachIsThenAHit() throws {
        let server = try serve()
        let good = [
            "/thumb?src=landscape.jpg&w=200&ratio=4:3&mode=fill", "/info?src=portrait.jpg",
            "/insecure/rs:fill:120:120/plain/logo.png@png", "/unsafe/150x100/landscape.jpg",
            "http://127.0.0.1:\(server.port)/thumb?src=square.webp&w=90",
        ]
        let missing = "/thumb?src=nowhere.jpg&w=100"
        let path = try list("list.txt", ["# launch"] + good.prefix(2) + ["", missing] + good.dropFirst(2))
        let failed = dir.appendingPathComponent("failed.txt").path
        let r = try warm([path, "--url", "http://127.0.0.1:\(server.port)", "--failed", failed, "--json"])
        #expect(r.status == 1, "\(r.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(summary["total"] as? Int == 6 && summary["made"] as? Int == 5 && summary["failed"] as? Int == 1)
        #expect(try String(contentsOfFile: failed, encoding: .utf8) == "404 \(missing)\n")
        #expect(r.stderr.contains("404 \(missing)"), "the summary names it")
        for target in good {
            let t =
                target.hasPrefix("http") ? String(target.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" }) : target
            let again = try ServiceTests.get(server.port, t, headers: Self.accept)
            #expect(again.status == 200 && again.headers["x-cache"] == "HIT", "\(t)")
        }
        let second = try warm([path, "--url", "http://127.0.0.1:\(server.port)", "--json", "--progress", "none"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(second.stdout.utf8)) as? [String: Any])
        #expect(object["hit"] as? Int == 5 && object["made"] as? Int == 0)
    }

    /// `--sources` × two lists: their product for each source, all hits afterwards.
    @Test func sourcesAndListsMakeTheirProduct() throws {
        let server = try serve()
        let base = "http://127.0.0.1:\(server.port)"
        let args = ["--sources", "*.jpg", "--w", "120,240", "--format", "webp,jpeg", "--url", base, "--json"]
        let r = try warm(args)
        #expect(r.status == 0, "\(r.stderr)")
        let first = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        // landscape.jpg and portrait.jpg, 2 widths × 2 formats each.
        #expect(first["total"] as? Int == 8 && first["made"] as? Int == 8)
        let hit = try ServiceTests.get(server.port, "/thumb?src=portrait.jpg&w=240&format=webp")
        #expect(hit.headers["x-cache"] == "HIT")
        let again = try warm(args)
        let second = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        #expect(second["hit"] as? Int == 8)
        #expect(try warm(["--sources", "*.jpg", "--url", base]).status == 2, "no preset and no flags")
        #expect(try warm(["--sources", "*.tga", "--w", "100", "--url", base]).status == 2, "matches nothing")
    }

    /// A queue of one and eight at once: the 503s are asked again after Retry-After, and
    /// nothing fails.
    @Test func aFullQueueIsAskedAgain() throws {
        let server = try serve(["ASPECT_SERVER_QUEUEDEPTH": "1", "ASPECT_SERVER_WORKERS": "1"])
        let path = try list("queue.txt", (1...24).map { "/thumb?src=landscape.jpg&w=\(1200 + $0 * 7)&format=png" })
        // The threads whose answer came send again at once and keep the two places; one that
        // was refused waits its second and may be refused again until the list runs out, so
        // it is given as many tries as a slow machine needs.
        let r = try warm([
            path, "--url", "http://127.0.0.1:\(server.port)", "--concurrency", "8", "--retries", "100", "--json",
        ])
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(summary["made"] as? Int == 24 && summary["failed"] as? Int == 0)
        #expect(r.stderr.contains("asked again after a 503 or 429"), "the queue did refuse some: \(r.stderr)")
    }

    /// Ctrl-C mid-run: the summary, then 130. Running again finishes the rest, and a third
    /// run finds only hits.
    @Test func anInterruptedRunSaysSoAndTheNextOneFinishes() throws {
        let server = try serve()
        let base = "http://127.0.0.1:\(server.port)"
        let path = try list("many.txt", (1...200).map { "/thumb?src=landscape.jpg&w=\(1000 + $0)&format=png" })
        let p = Process()
        p.executableURL = Binary.built("aspect")
        p.arguments = ["warm", path, "--url", base, "--concurrency", "1", "--progress", "bar", "--json"]
        p.currentDirectoryURL = dir
        p.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ASPECT_") }
        let out = Pipe()
        let err = Pipe()
        (p.standardOutput, p.standardError) = (out, err)
        try p.run()
        // Interrupted once the bar says some are done.
        var seen = ""
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, seen.range(of: #"\] [1-9][0-9]*/200"#, options: .regularExpression) == nil {
            seen += String(decoding: err.fileHandleForReading.availableData, as: UTF8.self)
        }
        kill(p.processIdentifier, SIGINT)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = seen + String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 130, "\(stderr)")
        #expect(stderr.contains("interrupted; running it again finishes the rest"))
        let first = try #require(try JSONSerialization.jsonObject(with: stdout) as? [String: Any])
        let done = try #require(first["made"] as? Int)
        #expect(done > 0 && done < 200)
        let second = try warm([path, "--url", base, "--json", "--concurrency", "4"])
        #expect(second.status == 0)
        let s = try #require(try JSONSerialization.jsonObject(with: Data(second.stdout.utf8)) as? [String: Any])
        #expect(s["hit"] as? Int == done && s["made"] as? Int == 200 - done)
        let third = try warm([path, "--url", base, "--json", "--concurrency", "4"])
        let t = try #require(try JSONSerialization.jsonObject(with: Data(third.stdout.utf8)) as? [String: Any])
        #expect(t["hit"] as? Int == 200)
    }

    /// `--offline` fills `cache.dir` through the service's own handler; a service started on
    /// it answers the same requests as hits.
    @Test func offlineThenServeAnswersHits() throws {
        let targets = [
            "/thumb?src=landscape.jpg&w=333&ratio=1:1&mode=fill", "/unsafe/fit-in/210x210/portrait.jpg",
            "/thumb?src=nowhere.jpg&w=10",
        ]
        let path = try list("offline.txt", targets)
        let r = try warm([path, "--offline", "--json"])
        #expect(r.status == 1, "\(r.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(summary["made"] as? Int == 2 && summary["failed"] as? Int == 1)
        let server = try serve()
        for target in targets.prefix(2) {
            let answer = try ServiceTests.get(server.port, target, headers: Self.accept)
            #expect(answer.status == 200 && answer.headers["x-cache"] == "HIT", "\(target)")
        }
        let again = try warm([path, "--offline", "--json"])
        let second = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        #expect(second["hit"] as? Int == 2, "a running service on the folder is no obstacle")
    }

    /// `--offline` renders in sandboxed worker processes, as the server does: a source that
    /// crashes its worker (and the fresh one it is tried again in) costs that request, a 422
    /// in `--failed`, and the run goes on to make every other; a worker killed once from
    /// outside mid-render costs nothing (the render is tried again).
    @Test func offlineACrashedRenderCostsItsRequestAndTheRunGoesOn() throws {
        let images = dir.appendingPathComponent("images")
        for i in 0..<40 {
            try FileManager.default.copyItem(
                at: images.appendingPathComponent("landscape.jpg"), to: images.appendingPathComponent("c\(i).jpg"))
        }
        // The 21st crashes every worker that reads it (the debug build's test hook).
        try FileManager.default.removeItem(at: images.appendingPathComponent("c20.jpg"))
        try Data("ASPECT-ATTACK crash\n".utf8).write(to: images.appendingPathComponent("c20.jpg"))
        let path = try list("crash.txt", (0..<40).map { "/thumb?src=c\($0).jpg&w=\(1200 + $0)&format=png" })
        let failed = dir.appendingPathComponent("crash-failed.txt").path
        let p = Process()
        p.executableURL = Binary.built("aspect")
        p.arguments = [
            "warm", path, "--offline", "--concurrency", "1", "--progress", "none", "--json", "--failed", failed,
        ]
        p.currentDirectoryURL = dir
        p.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ASPECT_") }
            .merging(Self.env.merging(["ASPECT_SERVER_WORKERS": "1", "TESTHOOK_ASPECT_ATTACKS": "1"]) { $1 }) { $1 }
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        var workers: [pid_t] = []
        for _ in 0..<500 where workers.isEmpty {
            usleep(10_000)
            workers = IsolationTests.workers(of: p.processIdentifier)
        }
        #expect(workers.count == 1, "one render worker under the warm process: \(workers)")
        // Once a result is stored (the worker is rendering: one killed before its first job
        // is replaced and costs nothing), stopped: the render it holds, or the next one
        // handed to it, waits there, and it is killed.
        let cache = dir.appendingPathComponent("cache").path
        for _ in 0..<1000 {
            let files = FileManager.default.enumerator(atPath: cache)?.allObjects as? [String] ?? []
            if files.contains(where: { $0.hasSuffix(".png") }) { break }
            usleep(10_000)
        }
        IsolationTests.crash(workers) {}
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        #expect(p.terminationReason == .exit && p.terminationStatus == 1, "\(String(decoding: stdout, as: UTF8.self))")
        let summary = try #require(try JSONSerialization.jsonObject(with: stdout) as? [String: Any])
        #expect(summary["made"] as? Int == 39 && summary["failed"] as? Int == 1, "\(summary)")
        let lines = try String(contentsOfFile: failed, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 1 && lines.first?.hasPrefix("422 ") == true, "\(lines)")
    }

    @Test func badArgumentsAreExitTwo() throws {
        #expect(try warm(["--nonsense"]).status == 2)
        #expect(try warm(["--progress", "fancy", "x.txt"]).status == 2)
        #expect(try warm(["a.txt", "b.txt"]).status == 2)
        #expect(try warm(["--concurrency", "0", "x.txt"]).status == 2)
    }
}
