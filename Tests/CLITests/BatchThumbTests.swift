import Foundation
import Imaging
import TestSupport
import Testing

/// `aspect thumb SRC… --out DIR` through the binary (SPEC: Warming and batches; issue 43):
/// a folder with a sub-folder and a damaged file, the manifest held to the files and to
/// `/info`, a second run that makes and rewrites nothing, and the progress bar under a
/// pseudo-terminal.
@Suite(.serialized) struct BatchThumbTests {
    let dir: URL
    var images: URL { dir.appendingPathComponent("images") }

    init() throws {
        dir = try ServeProcess.sampleFolder("batch")
        let sub = images.appendingPathComponent("2024/trip")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: images.appendingPathComponent("landscape.jpg"), to: sub.appendingPathComponent("view.jpg"))
        // The first 3 KB of a JPEG: a header that promises pixels it does not have.
        let whole = try Data(contentsOf: images.appendingPathComponent("portrait.jpg"))
        try whole.prefix(3000).write(to: sub.appendingPathComponent("damaged.jpg"))
    }

    func thumb(_ args: [String]) throws -> Binary.Result {
        try Binary.run(["thumb"] + args, env: ["ASPECT_LOG_ACCESS": "false"], cwd: dir)
    }

    func modified(_ path: String) throws -> Date? {
        try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
    }

    @Test func aFolderIsMadeAndTheManifestAgrees() throws {
        let args = ["images", "--out", "out", "--w", "160,320", "--format", "webp", "--manifest", "m.json", "--json"]
        let r = try thumb(args)
        #expect(r.status == 1, "the damaged file fails: \(r.stderr)")
        #expect(r.stderr.contains("images/2024/trip/damaged.jpg"), "it is named")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        // 9 sources (the 8 samples and view.jpg) × 2 widths made, damaged.jpg's 2 failed.
        #expect(summary["made"] as? Int == 18 && summary["failed"] as? Int == 2, "\(r.stdout)")
        let manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("m.json")))
                as? [[String: Any]])
        #expect(manifest.count == 18)
        for entry in manifest {
            let path = try #require(entry["path"] as? String)
            let bytes = try [UInt8](Data(contentsOf: dir.appendingPathComponent(path)))
            let image = try ImageFile.decode(bytes)
            #expect(entry["width"] as? Int == image.width && entry["height"] as? Int == image.height, "\(path)")
            #expect(entry["bytes"] as? Int == bytes.count && entry["format"] as? String == "webp")
            #expect(Array(bytes.prefix(4)) == Array("RIFF".utf8))
            #expect(image.width == (path.contains("-160w") ? 160 : 320), "\(path)")
            let ratio = try #require(entry["ratio"] as? Double)
            #expect(abs(ratio - Double(image.width) / Double(image.height)) < 1e-9)
        }
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out/2024/trip/view-320w.webp").path))
        #expect(
            !FileManager.default.fileExists(atPath: dir.appendingPathComponent("out/2024/trip/damaged-320w.webp").path))
        // The manifest's ThumbHash is /info's.
        let server = try ServeProcess(samples: dir)
        let info = try ServiceTests.get(server.port, "/info?src=2024/trip/view.jpg")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(info.body)) as? [String: Any])
        let view = try #require(manifest.first { ($0["path"] as? String) == "out/2024/trip/view-160w.webp" })
        #expect(view["thumbhash"] as? String == document["thumbhash"] as? String)
        #expect(view["source"] as? String == "images/2024/trip/view.jpg")

        // Again: nothing made, nothing rewritten, the manifest the same.
        let output = dir.appendingPathComponent("out/landscape-320w.webp").path
        let before = try modified(output)
        let again = try thumb(args)
        let second = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        #expect(second["made"] as? Int == 0 && second["skipped"] as? Int == 18 && again.status == 1)
        #expect(try modified(output) == before)
        let manifestAgain = try JSONSerialization.jsonObject(
            with: Data(contentsOf: dir.appendingPathComponent("m.json")))
        #expect((manifestAgain as? [[String: Any]])?.count == 18)
        // Other flags make it again; --force too.
        let other = try thumb(["images/landscape.jpg", "--out", "out", "--w", "320", "--format", "webp", "--q", "50"])
        #expect(other.status == 0 && other.stderr.contains("1 made"))
        let forced = try thumb([
            "images/landscape.jpg", "--out", "out", "--w", "320", "--format", "webp", "--q", "50", "--force",
        ])
        #expect(forced.status == 0 && forced.stderr.contains("1 made"))
    }

    @Test func namesAndBadArguments() throws {
        let r = try thumb([
            "images/landscape.jpg", "images/nothing.jpg", "--out", "named", "--w", "100,200", "--dpr", "1,2",
        ])
        #expect(r.status == 1 && r.stderr.contains("images/nothing.jpg"))
        for name in ["landscape-100w-1x.jpg", "landscape-200w-2x.jpg"] {
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("named/" + name).path), "\(name)")
        }
        let img = try ImageFile.decode(
            [UInt8](try Data(contentsOf: dir.appendingPathComponent("named/landscape-200w-2x.jpg"))))
        #expect(img.width == 400)
        #expect(try thumb(["images", "--out", "x", "--w", "0"]).status == 2)
        #expect(try thumb(["images", "--out", "x", "--format", "bmp"]).status == 2)
        #expect(try thumb(["images", "--out", "x", "--jobs", "0"]).status == 2)
        #expect(try thumb(["--out", "x"]).status == 2)
    }

    /// The bar under a pseudo-terminal (Python's pty): redrawn with \r, at 100% at the
    /// end, then the summary; without a terminal, no control characters at all.
    @Test func theBarOnATerminalAndPlainLinesOffIt() throws {
        let script = """
            import os, pty, sys
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[1], sys.argv[1:])
            out = b""
            while True:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            _, status = os.waitpid(pid, 0)
            sys.stdout.buffer.write(out)
            sys.exit(os.waitstatus_to_exitcode(status))
            """
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [
            "-c", script, Binary.built("aspect").path, "thumb", "images/landscape.jpg", "images/logo.png", "--out",
            "tty", "--w", "64,128,256",
        ]
        p.currentDirectoryURL = dir
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(text)")
        #expect(text.contains("\r[") && text.contains("6/6 100%"), "\(text)")
        #expect(text.contains("thumb: 6 of 6 in"))
        let plain = try thumb(["images/landscape.jpg", "--out", "plain", "--w", "64,128"])
        #expect(plain.status == 0)
        #expect(!plain.stderr.contains("\r") && !plain.stderr.contains("\u{1B}"))
        #expect(plain.stderr.contains("thumb: 2 of 2 in"))
    }
}
