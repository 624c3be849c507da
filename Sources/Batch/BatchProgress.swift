import Foundation
import Synchronization

/// The progress of `aspect warm` and `aspect thumb --out` (SPEC: Warming and batches): the
/// counts as outcomes arrive, one line redrawn in place on a terminal (at most ten times a
/// second) or a plain line every 5 s elsewhere, and the summary at the end, as text and as
/// JSON. It writes through `write` and reads time from `clock`, so it is tested without a
/// terminal or a wait.
public final class BatchProgress: Sendable {
    public enum Mode: String, Sendable, CaseIterable {
        case auto, bar, plain, none
    }

    public enum Outcome: Sendable {
        case hit, made, skipped
        case failed(target: String, status: String, error: String)
    }

    public struct Failure: Sendable, Equatable {
        public var target: String
        public var status: String
        public var error: String
    }

    public struct Summary: Sendable {
        public var total: Int
        public var hit = 0
        public var made = 0
        public var skipped = 0
        public var failed = 0
        public var seconds = 0.0
        public var failures: [Failure] = []
        public var interrupted = false
        /// Requests asked again after a 503 or 429 (the text summary says how many).
        public var retried = 0

        public var done: Int { hit + made + skipped + failed }

        /// SPEC's object: `{"total", "hit", "made", "skipped", "failed", "seconds", "failures"}`.
        public var json: String {
            let object: [String: Any] = [
                "total": total, "hit": hit, "made": made, "skipped": skipped, "failed": failed,
                "seconds": (seconds * 1000).rounded() / 1000,
                "failures": failures.map { ["target": $0.target, "status": $0.status, "error": $0.error] },
            ]
            let data = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            return data.map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }
    }

    /// The counts and what was last drawn.
    struct State {
        var summary: Summary
        var lastDrawn = -Double.infinity
        var drewBar = false
    }

    /// How many failures the summary names (all go to `--failed`).
    public static let namedFailures = 20

    let mode: Mode
    let label: String
    let write: @Sendable (String) -> Void
    let clock: @Sendable () -> Double
    let start: Double
    private let state: Mutex<State>

    /// `mode` as asked: `auto` is a bar when `isTerminal`, else plain lines.
    public init(
        label: String, total: Int, mode: Mode, isTerminal: Bool, write: @escaping @Sendable (String) -> Void,
        clock: @escaping @Sendable () -> Double = { Date().timeIntervalSinceReferenceDate }
    ) {
        self.label = label
        self.mode = mode == .auto ? (isTerminal ? .bar : .plain) : mode
        self.write = write
        self.clock = clock
        start = clock()
        state = Mutex(State(summary: Summary(total: total)))
    }

    /// One request or output finished.
    public func record(_ outcome: Outcome) {
        let now = clock()
        let line: String? = state.withLock { s in
            switch outcome {
            case .hit: s.summary.hit += 1
            case .made: s.summary.made += 1
            case .skipped: s.summary.skipped += 1
            case .failed(let target, let status, let error):
                s.summary.failed += 1
                s.summary.failures.append(Failure(target: target, status: status, error: error))
            }
            let last = s.summary.done == s.summary.total
            switch mode {
            case .bar where last || now - s.lastDrawn >= 0.1:
                s.lastDrawn = now
                s.drewBar = true
                return "\r" + Self.line(s.summary, elapsed: now - start, bar: true) + "\u{1B}[K"
            case .plain where !last && now - s.lastDrawn >= 5:
                if s.lastDrawn == -.infinity {
                    // The first line comes 5 s in, not at once.
                    s.lastDrawn = now
                    return nil
                }
                s.lastDrawn = now
                return label + ": " + Self.line(s.summary, elapsed: now - start, bar: false) + "\n"
            default:
                return nil
            }
        }
        if let line { write(line) }
    }

    /// A request is asked again after a 503 or 429.
    public func retried() { state.withLock { $0.summary.retried += 1 } }

    /// The closing summary (after the bar's last drawing, or the last plain line): written
    /// always, whatever the mode.
    public func finish(interrupted: Bool = false) -> Summary {
        let now = clock()
        let (summary, drewBar) = state.withLock { s in
            s.summary.seconds = now - start
            s.summary.interrupted = interrupted
            return (s.summary, s.drewBar)
        }
        var text = drewBar ? "\r" + Self.line(summary, elapsed: summary.seconds, bar: true) + "\u{1B}[K\n" : ""
        if mode == .plain { text += label + ": " + Self.line(summary, elapsed: summary.seconds, bar: false) + "\n" }
        text += Self.summaryText(label: label, summary)
        write(text)
        return summary
    }

    /// `label: N of M in S s (R/s): hits, made, skipped, failed`, the first failures, and a
    /// word on an interrupted run.
    public static func summaryText(label: String, _ s: Summary) -> String {
        var text =
            "\(label): \(s.done) of \(s.total) in \(String(format: "%.1f", s.seconds)) s: \(s.hit) hit, \(s.made) made, "
            + "\(s.skipped) skipped, \(s.failed) failed\n"
        if s.retried > 0 { text += "  \(s.retried) asked again after a 503 or 429\n" }
        for f in s.failures.prefix(namedFailures) {
            text += "  \(f.status) \(f.target)\(f.error.isEmpty ? "" : ": \(f.error)")\n"
        }
        if s.failures.count > namedFailures { text += "  … and \(s.failures.count - namedFailures) more\n" }
        if s.interrupted {
            text += "\(label): interrupted; running it again finishes the rest (the done ones are hits)\n"
        }
        return text
    }

    /// `[#####     ] 120/400 30% 12.3/s 0:23 left  hit 100 made 20 skipped 0 failed 0`
    /// (the bar's part only on a terminal).
    static func line(_ s: Summary, elapsed: Double, bar: Bool) -> String {
        let fraction = s.total > 0 ? Double(s.done) / Double(s.total) : 1
        let rate = elapsed > 0 ? Double(s.done) / elapsed : 0
        let left = rate > 0 ? Double(s.total - s.done) / rate : 0
        var text = ""
        if bar {
            let filled = Int((fraction * 24).rounded(.down))
            text += "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: 24 - filled) + "] "
        }
        text += "\(s.done)/\(s.total) \(Int((fraction * 100).rounded(.down)))% "
        text += String(format: "%.1f/s ", rate) + clockText(left) + " left"
        text += "  hit \(s.hit) made \(s.made) skipped \(s.skipped) failed \(s.failed)"
        return text
    }

    /// `m:ss`, or `h:mm:ss` past an hour.
    static func clockText(_ seconds: Double) -> String {
        let t = Int(seconds.rounded())
        let (h, m, sec) = (t / 3600, t / 60 % 60, t % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, sec) : String(format: "%d:%02d", m, sec)
    }
}
