import Glibc
import Synchronization
import Syscalls

/// What the two caches on disk share: an index of entries, each with its size in bytes,
/// kept under `maxBytes` by letting the least recently used go (down to 90%, so eviction
/// runs now and then rather than on every insert), rebuilt from the folder on start; files
/// are written by `AtomicFile`. The result store
/// (`DiskCache`) and the source cache (`SourceCache`) each lay out their folder and say
/// what an entry's `Meta` is; this keeps the books. Thread-safe.
public final class DiskLRU<Meta: Sendable>: Sendable {
    public struct Entry: Sendable {
        public var meta: Meta
        public var size: Int64
        var lastUse: UInt64
    }

    struct State: Sendable {
        var entries: [String: Entry] = [:]
        var total: Int64 = 0
        var clock: UInt64 = 0
        var evictions = 0
    }

    public let maxBytes: Int64
    private let state = Mutex(State())

    public init(maxBytes: Int64) { self.maxBytes = maxBytes }

    /// The entry for `key`, marked as used now; nil when there is none.
    public func use(_ key: String) -> Entry? {
        state.withLock { s in
            guard let i = s.entries.index(forKey: key) else { return nil }
            s.clock += 1
            s.entries.values[i].lastUse = s.clock
            return s.entries.values[i]
        }
    }

    /// Whether there is an entry for `key` (not marked as used).
    public func contains(_ key: String) -> Bool { state.withLock { $0.entries[key] != nil } }

    /// Changes an entry's `Meta` in place, if it is there.
    public func update(_ key: String, _ change: (inout Meta) -> Void) {
        state.withLock { s in
            guard let i = s.entries.index(forKey: key) else { return }
            change(&s.entries.values[i].meta)
        }
    }

    /// Puts an entry in as the most recently used; the one it replaced, and those evicted
    /// to make room (never `key` itself), whose files the caller removes.
    public func insert(_ key: String, _ meta: Meta, size: Int64) -> (replaced: Entry?, evicted: [(String, Entry)]) {
        state.withLock { s in
            s.clock += 1
            let old = s.entries.updateValue(Entry(meta: meta, size: size, lastUse: s.clock), forKey: key)
            s.total += size - (old?.size ?? 0)
            return (old, Self.evict(&s, maxBytes: maxBytes, keeping: key))
        }
    }

    /// Takes an entry out; it, if it was there.
    @discardableResult
    public func remove(_ key: String) -> Entry? {
        state.withLock { s in
            guard let old = s.entries.removeValue(forKey: key) else { return nil }
            s.total -= old.size
            return old
        }
    }

    /// The index anew, from what a scan of the folder found, the least recently used
    /// first (after a restart, the oldest written); those evicted to fit.
    public func rebuild(_ found: [(key: String, meta: Meta, size: Int64)]) -> [(String, Entry)] {
        state.withLock { s in
            s = State()
            for f in found {
                s.clock += 1
                s.entries[f.key] = Entry(meta: f.meta, size: f.size, lastUse: s.clock)
                s.total += f.size
            }
            return Self.evict(&s, maxBytes: maxBytes, keeping: nil)
        }
    }

    /// Bytes held, entries, evictions so far.
    public var figures: (bytes: Int64, entries: Int, evictions: Int) {
        state.withLock { ($0.total, $0.entries.count, $0.evictions) }
    }

    private static func evict(_ s: inout State, maxBytes: Int64, keeping: String?) -> [(String, Entry)] {
        guard s.total > maxBytes else { return [] }
        var doomed: [(String, Entry)] = []
        for (key, e) in s.entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
            if s.total <= maxBytes / 10 * 9 { break }
            if key == keeping { continue }
            s.entries[key] = nil
            s.total -= e.size
            s.evictions += 1
            doomed.append((key, e))
        }
        return doomed
    }
}
