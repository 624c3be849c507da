import Batch
import Core
import Foundation
import Glibc
import Synchronization

/// The arguments `aspect warm` and `aspect thumb --out` share: positional words, their own
/// flags (with values, or alone), and `/thumb` parameters as flags whose values are comma
/// lists, in the order given.
struct BatchArguments {
    var positional: [String] = []
    /// Flags with a value, the last one of a name winning, but the repeatable ones.
    var values: [String: [String]] = [:]
    var switches: Set<String> = []
    var lists: [(name: String, values: [String])] = []

    /// `valued` take a value, `alone` none; any `/thumb` parameter (but `src` and `sig`)
    /// takes a comma list.
    static func parse(_ args: [String], valued: Set<String>, alone: Set<String>) throws(ArgumentError)
        -> BatchArguments
    {
        var parsed = BatchArguments()
        let parameters = Set(ThumbRequest.parameterNames).subtracting(["src", "sig"])
        var i = 0
        while i < args.count {
            let arg = args[i]
            i += 1
            guard arg.hasPrefix("--"), arg.count > 2 else {
                parsed.positional.append(arg)
                continue
            }
            var name = String(arg.dropFirst(2))
            var value: String?
            if let eq = name.firstIndex(of: "=") {
                value = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            if alone.contains(name) {
                guard value == nil else { throw ArgumentError("--\(name) takes no value") }
                parsed.switches.insert(name)
                continue
            }
            guard valued.contains(name) || parameters.contains(name) else {
                throw ArgumentError("unknown flag --\(name)")
            }
            if value == nil {
                guard i < args.count else { throw ArgumentError("--\(name) needs a value") }
                value = args[i]
                i += 1
            }
            let v = value ?? ""
            if valued.contains(name) {
                parsed.values[name, default: []].append(v)
            } else {
                let items = v.split(separator: ",", omittingEmptySubsequences: true).map(String.init)
                guard !items.isEmpty else { throw ArgumentError("--\(name) needs a value") }
                parsed.lists.removeAll { $0.name == name }
                parsed.lists.append((name, items))
            }
        }
        return parsed
    }

    func value(_ name: String) -> String? { values[name]?.last }

    /// A positive count, or the default.
    func count(_ name: String, default d: Int, range: ClosedRange<Int> = 1...10_000) throws(ArgumentError) -> Int {
        guard let v = value(name) else { return d }
        guard let n = Int(v), range.contains(n) else {
            throw ArgumentError("--\(name) is a whole number from \(range.lowerBound) to \(range.upperBound), got \(v)")
        }
        return n
    }

    /// `--progress auto|bar|plain|none`.
    func progressMode() throws(ArgumentError) -> BatchProgress.Mode {
        guard let v = value("progress") else { return .auto }
        guard let mode = BatchProgress.Mode(rawValue: v) else {
            throw ArgumentError("--progress is auto, bar, plain or none, got \(v)")
        }
        return mode
    }
}

struct ArgumentError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// Ctrl-C during a batch: the first one stops new work and lets the summary come (exit
/// 130); a second one ends the process at once.
enum Interrupt {
    static let requested = Atomic<Bool>(false)

    static func install() {
        // A parent may have started this process with SIGINT blocked (the mask is
        // inherited): unblocked here, before any worker thread copies the mask.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        signal(SIGINT) { _ in
            if Interrupt.requested.exchange(true, ordering: .relaxed) { _exit(130) }
        }
    }

    static var isRequested: Bool { requested.load(ordering: .relaxed) }
}

/// Runs `count` items on `threads` threads, each item once, in order of index; stops
/// handing out items once `Interrupt` is requested. Returns when all taken ones are done.
func runConcurrently(count: Int, threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
    final class Next: Sendable { let value = Atomic<Int>(0) }
    let next = Next()
    let group = DispatchGroup()
    for _ in 0..<max(1, min(threads, count)) {
        group.enter()
        Thread {
            while !Interrupt.isRequested {
                let i = next.value.add(1, ordering: .relaxed).oldValue
                guard i < count else { break }
                body(i)
            }
            group.leave()
        }.start()
    }
    group.wait()
}
