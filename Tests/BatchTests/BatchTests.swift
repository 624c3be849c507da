import Batch
import Core
import Foundation
import Synchronization
import Testing

/// `aspect warm` and `aspect thumb --out`'s parts without a process (SPEC: Warming and
/// batches): the progress line on a terminal and off one, the summary and its JSON, the
/// requests a list or `--sources` makes, and the batch's outputs and names.
@Suite struct BatchTests {
    /// What a progress writes, and a clock the test moves.
    final class Screen: Sendable {
        let text = Mutex("")
        let now = Mutex(0.0)
        func write(_ s: String) { text.withLock { $0 += s } }
        var all: String { text.withLock { $0 } }
        func advance(_ seconds: Double) { now.withLock { $0 += seconds } }
        func progress(total: Int, mode: BatchProgress.Mode, terminal: Bool) -> BatchProgress {
            BatchProgress(
                label: "warm", total: total, mode: mode, isTerminal: terminal, write: { self.write($0) },
                clock: { self.now.withLock { $0 } })
        }
    }

    @Test func onATerminalTheLineIsRedrawnAtMostTenTimesASecond() {
        let screen = Screen()
        let p = screen.progress(total: 100, mode: .auto, terminal: true)
        for i in 0..<100 {
            screen.advance(0.01)
            p.record(i % 10 == 0 ? .made : .hit)
        }
        let summary = p.finish()
        let drawn = screen.all.components(separatedBy: "\r").count - 1
        // 1 s of records: the first, then one each 0.1 s, the last, and the final drawing.
        #expect(drawn >= 10 && drawn <= 13, "\(drawn) drawings")
        #expect(screen.all.contains("100/100 100%") && screen.all.contains("[########################]"))
        #expect(screen.all.contains("\u{1B}[K"), "each drawing clears the rest of the line")
        #expect(screen.all.hasSuffix("warm: 100 of 100 in 1.0 s: 90 hit, 10 made, 0 skipped, 0 failed\n"))
        #expect(summary.hit == 90 && summary.made == 10 && summary.done == 100)
    }

    @Test func offATerminalPlainLinesEveryFiveSecondsAndNoControlCharacters() {
        let screen = Screen()
        let p = screen.progress(total: 30, mode: .auto, terminal: false)
        for i in 0..<30 {
            screen.advance(0.5)
            p.record(i == 7 ? .failed(target: "/thumb?src=gone.jpg", status: "404", error: "no such source") : .made)
        }
        _ = p.finish()
        let text = screen.all
        #expect(!text.contains("\r") && !text.contains("\u{1B}"))
        let lines = text.split(separator: "\n")
        // 15 s: lines at 5.5 s, 10.5 s (the first record starts the clock), then the last and the summary.
        #expect(lines.filter { $0.hasPrefix("warm: ") && $0.contains("% ") }.count == 3, "\(lines)")
        #expect(text.contains("  404 /thumb?src=gone.jpg: no such source"))
    }

    @Test func noneSaysOnlyTheSummary() {
        let screen = Screen()
        let p = screen.progress(total: 2, mode: .none, terminal: true)
        p.record(.skipped)
        p.record(.hit)
        _ = p.finish(interrupted: true)
        #expect(screen.all.hasPrefix("warm: 2 of 2"))
        #expect(screen.all.contains("interrupted; running it again finishes the rest"))
    }

    @Test func theSummaryAsJSON() throws {
        let screen = Screen()
        let p = screen.progress(total: 3, mode: .none, terminal: false)
        p.record(.hit)
        p.record(.made)
        p.record(.failed(target: "/thumb?src=\"x\".jpg", status: "404", error: "line\nbreak"))
        let s = p.finish()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(s.json.utf8)) as? [String: Any])
        #expect(object["total"] as? Int == 3 && object["hit"] as? Int == 1 && object["made"] as? Int == 1)
        #expect(object["skipped"] as? Int == 0 && object["failed"] as? Int == 1 && object["seconds"] is Double)
        let failures = try #require(object["failures"] as? [[String: String]])
        #expect(failures == [["target": "/thumb?src=\"x\".jpg", "status": "404", "error": "line\nbreak"]])
    }

    @Test func aListsLines() {
        let list =
            "# launch\n/thumb?src=a.jpg&w=320\n\n  https://img.example.com/thumb?src=b.jpg  \n/unsafe/300x200/c.jpg\n"
        let targets = WarmRequests.targets(fromList: list)
        #expect(
            targets == ["/thumb?src=a.jpg&w=320", "https://img.example.com/thumb?src=b.jpg", "/unsafe/300x200/c.jpg"])
        #expect(WarmRequests.target(of: targets[1]) == "/thumb?src=b.jpg" && WarmRequests.isURL(targets[1]))
        #expect(WarmRequests.target(of: targets[0]) == targets[0] && !WarmRequests.isURL(targets[0]))
    }

    /// Every source × every preset × the product of the lists, a source's together.
    @Test func sourcesTimesListsMakeTheirProduct() {
        let q = WarmRequests.queries(
            sources: ["a.jpg", "dir/b c.jpg"], presets: [],
            flags: [("w", ["320", "640"]), ("format", ["webp", "avif"])])
        #expect(q.count == 8)
        #expect(WarmRequests.query(q[0]) == "src=a.jpg&w=320&format=webp")
        #expect(WarmRequests.query(q[7]) == "src=dir/b%20c.jpg&w=640&format=avif")
        let presets = WarmRequests.queries(
            sources: ["a.jpg"], presets: ["card", "hero"], flags: [("dpr", ["1", "2"])])
        #expect(
            presets.map(WarmRequests.query) == [
                "src=a.jpg&preset=card&dpr=1", "src=a.jpg&preset=card&dpr=2", "src=a.jpg&preset=hero&dpr=1",
                "src=a.jpg&preset=hero&dpr=2",
            ])
    }

    @Test func sourcePatterns() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("aspect-glob-\(UUID().uuidString)")
            .path
        for path in ["a.jpg", "b.png", "2024/c.jpg", "2024/05/d.jpg", ".hidden/e.jpg", "2024/.f.jpg"] {
            let full = root + "/" + path
            try FileManager.default.createDirectory(
                atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: full, contents: Data()))
        }
        #expect(WarmRequests.sources(matching: "*.jpg", under: root) == ["a.jpg"])
        #expect(WarmRequests.sources(matching: "**/*.jpg", under: root) == ["2024/05/d.jpg", "2024/c.jpg", "a.jpg"])
        #expect(WarmRequests.sources(matching: "2024/*", under: root) == ["2024/c.jpg"])
        #expect(WarmRequests.sources(matching: "?.png", under: root) == ["b.png"])
    }

    /// `STEM.EXT` alone, `STEM-320w.EXT` with a list, `-2x` for a dpr list, sub-folders kept.
    @Test func outputNames() {
        let sources = [(path: "in/sub/cat.jpg", relative: "sub/cat.jpg")]
        let one = BatchOutputs.jobs(sources: sources, out: "out", lists: [("w", ["320"])], formats: [])
        #expect(one.map(\.output) == ["out/sub/cat.jpg"])
        let many = BatchOutputs.jobs(
            sources: sources, out: "out", lists: [("w", ["320", "640"]), ("dpr", ["1", "2"])], formats: [.webp, .avif])
        #expect(many.count == 8)
        #expect(many.map(\.output).contains("out/sub/cat-640w-2x.avif"))
        #expect(many[0].flags == "w=320&dpr=1&format=webp")
        #expect(BatchOutputs.defaultFormat(of: "a.heic") == .jpeg && BatchOutputs.defaultFormat(of: "a.PNG") == .png)
    }
}
