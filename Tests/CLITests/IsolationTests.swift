import Foundation
import Glibc
import Imaging
import ImagingTestSupport
import Synchronization
import TestSupport
import Testing

/// Renders in sandboxed worker processes (SPEC: Isolation), through the binary: a worker
/// that dies costs the one request it held, hits go on, the source is refused for a while,
/// a hung worker is killed at the deadline, and the sandbox refuses what a decoder must not do.
@Suite(.serialized) struct IsolationTests {
    let dir: URL

    init() throws { dir = try ServeProcess.sampleFolder("isolation") }

    /// The service's render workers, by /proc: its children running `render-worker`.
    static func workers(of server: ServeProcess) -> [pid_t] { workers(of: server.process.processIdentifier) }

    /// The render workers of the `aspect` process `pid` (a service, or `aspect warm --offline`).
    static func workers(of pid: pid_t) -> [pid_t] {
        // Each thread's children: a worker is started by whichever thread replaced one.
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        let children = tasks.map {
            (try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/children", encoding: .utf8)) ?? ""
        }
        .joined(separator: " ")
        return children.split(separator: " ").compactMap { pid_t($0) }.filter { child in
            let line = (try? String(contentsOfFile: "/proc/\(child)/cmdline", encoding: .utf8)) ?? ""
            return line.contains("render-worker")
        }
    }

    /// The workers once `count` of them run: a child is a worker once it has exec'd (its
    /// command line says so), which a loaded machine may take a moment to show.
    static func workers(of server: ServeProcess, count: Int) -> [pid_t] {
        var found = workers(of: server)
        for _ in 0..<500 where found.count < count {
            usleep(10_000)
            found = workers(of: server)
        }
        return found
    }

    /// Stops `workers`, runs `hold` (which hands one of them a render, and waits until it
    /// is there), then kills them with `signal` mid-render.
    static func crash(_ workers: [pid_t], with signal: Int32 = SIGSEGV, holding hold: () throws -> Void) rethrows {
        for w in workers { kill(w, SIGSTOP) }
        try hold()
        usleep(200_000)
        for w in workers {
            kill(w, signal)
            kill(w, SIGCONT)
        }
    }

    static func restarts(_ server: ServeProcess, _ reason: String) throws -> Int {
        let text = try ServiceTests.get(server.port, "/metrics").text
        let line = text.split(separator: "\n").first {
            $0.hasPrefix(#"aspect_worker_restarts_total{reason="\#(reason)"}"#)
        }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
    }

    /// `signal` on the workers while one holds a render (all of them stopped first, so the
    /// render is surely in a worker when it arrives): that request is tried once more in a
    /// fresh worker and served, every hit made meanwhile on 16 connections answers 200, a
    /// new worker serves at once, and one death blames no source.
    @Test(arguments: [SIGSEGV, SIGABRT])
    func aCrashedWorkerCostsOneRequestAndHitsGoOn(signal: Int32) throws {
        let server = try ServeProcess(samples: dir, env: ["ASPECT_SERVER_WORKERS": "2"])
        let hit = "/thumb?src=landscape.jpg&w=120&format=jpeg"
        let port = server.port
        #expect(try ServiceTests.get(port, hit).status == 200)
        let workers = Self.workers(of: server, count: 2)
        #expect(workers.count == 2, "\(workers)")
        // Hits on 16 connections for as long as the crash takes.
        let stop = Atomic<Bool>(false)
        let failures = Atomic<Int>(0)
        let hits = Atomic<Int>(0)
        // Threads of their own: blocking loops on GCD's global queue would take all of its
        // few threads, and the miss below would never be sent.
        let finished = DispatchSemaphore(value: 0)
        for _ in 0..<16 {
            Thread {
                while !stop.load(ordering: .relaxed) {
                    let r = try? ServiceTests.get(port, hit)
                    if r?.status == 200 { hits.add(1, ordering: .relaxed) } else { failures.add(1, ordering: .relaxed) }
                }
                finished.signal()
            }.start()
        }
        let miss = Mutex<Int>(0)
        let done = DispatchSemaphore(value: 0)
        Self.crash(workers, with: signal) {
            Thread {
                let r = try? ServiceTests.get(port, "/thumb?src=portrait.jpg&w=333")
                miss.withLock { $0 = r?.status ?? -1 }
                done.signal()
            }.start()
            // Until the miss is on an image thread (its worker stopped, it waits there).
            for _ in 0..<500 where !ServiceTests.metrics(port).contains("aspect_workers_busy 1") { usleep(10_000) }
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(miss.withLock { $0 } == 200, "the crashed render's request, tried again in a fresh worker")
        // A new worker serves another source at once: within a second on a quiet machine
        // (printed), five allowed for a debug build beside the rest of the suite.
        let start = Date()
        #expect(try ServiceTests.get(server.port, "/thumb?src=square.webp&w=77").status == 200)
        let took = Date().timeIntervalSince(start)
        print("IsolationTests: after the crash (\(signal)), a new worker answered in \(Int(took * 1000)) ms")
        #expect(took < 5, "a worker restarted within the processing timeout")
        stop.store(true, ordering: .relaxed)
        for _ in 0..<16 { finished.wait() }
        #expect(failures.load(ordering: .relaxed) == 0 && hits.load(ordering: .relaxed) > 0)
        // One death blames no source: another size of it is rendered.
        #expect(try Self.restarts(server, "signal") >= 1)
        #expect(try ServiceTests.get(server.port, "/thumb?src=portrait.jpg&w=334").status == 200)
        #expect(Self.workers(of: server, count: 2).count == 2)
    }

    /// A source that crashes the worker that decodes it and the fresh one it is tried again
    /// in (the debug build's test hook) is a 422 and refused for limits.poisonSeconds with
    /// no worker tried; the service and its other requests go on.
    @Test func aSourceThatCrashesTwoWorkersIsRefused() throws {
        let server = try ServeProcess(
            samples: dir, env: ["ASPECT_SERVER_WORKERS": "2", "TESTHOOK_ASPECT_ATTACKS": "1"])
        try Data("ASPECT-ATTACK crash\n".utf8).write(to: dir.appendingPathComponent("images/crash.jpg"))
        let first = try ServiceTests.get(server.port, "/thumb?src=crash.jpg&w=50")
        #expect(first.status == 422 && first.text.contains("decode_crashed"), "\(first.text)")
        #expect(try Self.restarts(server, "signal") == 2)
        let again = try ServiceTests.get(server.port, "/thumb?src=crash.jpg&w=51")
        #expect(again.status == 422 && again.text.contains("decode_crashed"))
        #expect(try Self.restarts(server, "signal") == 2, "refused without a worker tried")
        #expect(try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&w=52").status == 200)
    }

    /// A worker that hangs (stopped) is killed at the deadline: 504, and it is replaced.
    @Test func aHungWorkerIsKilledAtTheDeadline() throws {
        let server = try ServeProcess(
            samples: dir, env: ["ASPECT_SERVER_WORKERS": "1", "ASPECT_LIMITS_PROCESSINGTIMEOUTMS": "500"])
        let workers = Self.workers(of: server, count: 1)
        #expect(workers.count == 1)
        // One render first: the worker is set up and has said it is ready.
        #expect(try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&w=90").status == 200)
        for w in workers { kill(w, SIGSTOP) }
        let start = Date()
        let r = try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&w=91")
        #expect(r.status == 504 && Date().timeIntervalSince(start) < 5, "\(r.text)")
        #expect(try Self.restarts(server, "deadline") == 1)
        #expect(try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&w=92").status == 200)
    }

    /// The sandbox a worker runs under: a socket, a connection, an exec or a new process
    /// kills it (SIGSYS); a thread and a file, which a render needs, do not.
    @Test(arguments: ["socket", "connect", "execve", "process"])
    func theSandboxRefuses(what: String) throws {
        let r = try Binary.run(["sandbox-check", what])
        #expect(r.signaled && r.status == SIGSYS, "\(what): status \(r.status), signaled \(r.signaled), \(r.stderr)")
        #expect(!r.stdout.contains("survived"))
    }

    /// A thread is allowed; opening a file by its path after the lock answers EACCES (what a
    /// render needs was opened during the warm-up) without killing the process.
    @Test(arguments: ["thread", "file"])
    func theSandboxLeavesWhatARenderNeeds(what: String) throws {
        let r = try Binary.run(["sandbox-check", what])
        #expect(r.status == 0 && !r.signaled && r.stdout.contains("survived"), "\(what): \(r.stderr)")
    }

    /// MutationTests' seeds (JPEG, PNG, WebP, GIF), 300 mutated files through the service
    /// under process isolation: each answer a thumbnail or a typed error (400, 413, 415,
    /// or 422 where a worker died of it), the service up throughout; how many workers died
    /// goes to the test's output.
    @Test func mutatedSourcesUnderWorkers() throws {
        let images = dir.appendingPathComponent("images")
        let raw = RawImage(width: 96, height: 64, filledWith: [30, 120, 200])
        func sample(_ name: String) throws -> [UInt8] {
            try [UInt8](Data(contentsOf: images.appendingPathComponent(name)))
        }
        let originals: [(ext: String, bytes: [UInt8])] = try [
            ("jpg", ImageFile.encode(raw, as: .jpeg)), ("png", ImageFile.encode(raw, as: .png)),
            ("webp", ImageFile.encode(raw, as: .webp)), ("gif", ImageFile.encode(raw, as: .gif)),
            ("svg", sample("badge.svg")), ("pdf", sample("brochure.pdf")), ("mp4", sample("clip.mp4")),
        ]
        let files = Mutation.files(from: originals, count: 300, seed: 0xBAD_F11E)
        for (name, bytes) in files { try Data(bytes).write(to: images.appendingPathComponent(name)) }
        let server = try ServeProcess(samples: dir)
        var statuses: [Int: Int] = [:]
        for (name, _) in files {
            let r = try ServiceTests.get(server.port, "/thumb?src=\(name)&w=48&h=48&mode=fill")
            statuses[r.status, default: 0] += 1
            #expect([200, 400, 413, 415, 422].contains(r.status), "\(name): \(r.status) \(r.text)")
        }
        #expect(try ServiceTests.get(server.port, "/healthz").status == 200)
        #expect(statuses[200, default: 0] > 20 && statuses[415, default: 0] > 50, "\(statuses)")
        let died = try ["signal", "seccomp", "memory", "deadline"].map { try Self.restarts(server, $0) }
        print(
            "IsolationTests: 300 mutated sources: \(statuses.sorted { $0.key < $1.key }), workers died: \(died.reduce(0, +))"
        )
        // Each file is asked for once: every 422 is a worker that died of that file, twice.
        #expect(statuses[422, default: 0] * 2 <= died.reduce(0, +), "\(statuses), \(died)")
        // None was killed by the sandbox: what the decoders do is in the allowlist.
        #expect(died[1] == 0, "seccomp kills: \(died[1])")
    }

    /// A worker killed while idle is noticed at once (its socket is watched), counted and
    /// replaced, without a request to find it.
    @Test func aWorkerThatDiesIdleIsReplacedAtOnce() throws {
        let server = try ServeProcess(samples: dir, env: ["ASPECT_SERVER_WORKERS": "2"])
        let workers = Self.workers(of: server, count: 2)
        #expect(workers.count == 2)
        _ = try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&w=40")
        kill(workers[0], SIGKILL)
        var replaced: [pid_t] = []
        for _ in 0..<300 {
            replaced = Self.workers(of: server)
            if replaced.count == 2, !replaced.contains(workers[0]) { break }
            usleep(10_000)
        }
        #expect(replaced.count == 2 && !replaced.contains(workers[0]), "\(workers) → \(replaced)")
        #expect(try Self.restarts(server, "signal") == 1)
        // No zombie left behind.
        let state = (try? String(contentsOfFile: "/proc/\(workers[0])/stat", encoding: .utf8)) ?? ""
        #expect(state.isEmpty, "\(state)")
    }

    /// Every source format renders in a worker: the samples (JPEG, PNG, WebP, GIF, SVG
    /// with text, PDF, MP4) and HEIF (HEVC), AVIF, TIFF and JPEG XL made here. Each answer
    /// is the picture an in-process render makes of it (`server.isolation=thread`), at the
    /// size the source's ratio gives, not only a 200.
    @Test func everyFormatRendersInAWorker() throws {
        let images = dir.appendingPathComponent("images")
        let raw = RawImage(width: 64, height: 48, filledWith: [200, 30, 30])
        for (name, container) in [
            ("made.avif", ImageFile.Container.avif), ("made.tif", .tiff), ("made.jxl", .jxl),
        ] {
            try Data(try ImageFile.encode(raw, as: container)).write(to: images.appendingPathComponent(name))
        }
        try Data(try ImageFile.transcodeLosslessly(try ImageFile.encode(raw, as: .png), to: .heic, bitdepth: 8))
            .write(to: images.appendingPathComponent("made.heic"))
        // An SVG with text (fontconfig and the fonts are found after the lock-down), and
        // the same without it, to see the text drawn.
        let card =
            ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 80"><rect width="200" height="80" fill="#204080"/>"##
        let text = ##"<text x="10" y="55" font-family="sans-serif" font-size="40" fill="#ffffff">Aspect</text>"##
        try Data((card + text + "</svg>").utf8).write(to: images.appendingPathComponent("text.svg"))
        try Data((card + "</svg>").utf8).write(to: images.appendingPathComponent("plain.svg"))
        let server = try ServeProcess(samples: dir)
        let inProcess = try ServeProcess(
            samples: dir, env: ["ASPECT_SERVER_ISOLATION": "thread", "ASPECT_CACHE_DIR": "cache-thread"])
        #expect(!Self.workers(of: server, count: 1).isEmpty)
        let withText = try ServiceTests.get(server.port, "/thumb?src=text.svg&w=200&format=png")
        let without = try ServiceTests.get(server.port, "/thumb?src=plain.svg&w=200&format=png")
        #expect(withText.status == 200 && without.status == 200 && withText.body != without.body, "\(withText.text)")
        struct Info: Decodable {
            struct Source: Decodable { let width, height: Int }
            let source: Source
        }
        for src in [
            "landscape.jpg", "logo.png", "square.webp", "bounce.gif", "badge.svg", "brochure.pdf", "clip.mp4",
            "made.avif", "made.heic", "made.tif", "made.jxl",
        ] {
            let r = try ServiceTests.get(server.port, "/thumb?src=\(src)&w=40&format=png")
            #expect(r.status == 200 && r.headers["content-type"] == "image/png", "\(src): \(r.text)")
            guard r.status == 200 else { continue }
            let info = try JSONDecoder().decode(
                Info.self, from: Data(try ServiceTests.get(server.port, "/info?src=\(src)").body)
            ).source
            let img = try ImageFile.decode(r.body)
            let height = max(1, Int((40 * Double(info.height) / Double(info.width)).rounded()))
            #expect(img.width == 40 && img.height == height, "\(src): \(img.width)×\(img.height), not 40×\(height)")
            let reference = try ImageFile.decode(
                try ServiceTests.get(inProcess.port, "/thumb?src=\(src)&w=40&format=png").body)
            let worst = zip(img.pixels, reference.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 255
            #expect(
                img.pixels.count == reference.pixels.count && worst <= 2,
                "\(src): off the in-process render by \(worst)")
            if src.hasPrefix("made.") {
                let p = img.pixel(20, 15)
                #expect(abs(Int(p[0]) - 200) <= 6 && abs(Int(p[1]) - 30) <= 6, "\(src): \(p)")
            }
        }
        let seccomp = try Self.restarts(server, "seccomp")
        let signal = try Self.restarts(server, "signal")
        #expect(seccomp == 0 && signal == 0)
    }
}
