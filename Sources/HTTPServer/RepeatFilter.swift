import Synchronization

/// Holds back a log line seen a moment ago: libvips repeats its warnings once per tile or
/// per decode (an AVIF's "ignoring nclx profile" five times a render). The first line of a
/// kind is written; the same line again within `window` is counted, not written; the first
/// one after the window is written with how many were held back.
public final class RepeatFilter: Sendable {
    struct Seen {
        var since: UInt64
        var held: Int
    }

    private let seen = Mutex<[String: Seen]>([:])
    private let window: UInt64
    /// The most distinct lines remembered; past it the memory starts over.
    private let capacity: Int

    public init(windowNanoseconds: UInt64 = 10_000_000_000, capacity: Int = 256) {
        window = windowNanoseconds
        self.capacity = capacity
    }

    /// The line to write for `line` at `now`, or nil to hold it back.
    public func pass(_ line: String, now: UInt64) -> String? {
        seen.withLock { table in
            if var s = table[line], now - s.since < window {
                s.held += 1
                table[line] = s
                return nil
            }
            let held = table[line]?.held ?? 0
            if table.count >= capacity { table.removeAll(keepingCapacity: true) }
            table[line] = Seen(since: now, held: 0)
            return held > 0 ? "\(line) (and \(held) more like it held back)" : line
        }
    }
}
