import Glibc
import Synchronization
import Syscalls

/// What the two caches on disk share: an index of entries, each with its size in bytes,
/// kept under `maxBytes` of disk by letting the least recently used go, rebuilt from the
/// folder on start; files are written by `AtomicFile`. The entries are linked in the order
/// of their use, so a use is a move to the front and an eviction takes the tail: each
/// insert evicts at most `evictionsPerInsert` entries, and nothing ever walks or sorts the
/// whole index (a cache of a million results does not stall its hits while it evicts). The result store
/// (`DiskCache`) and the source cache (`SourceCache`) each lay out their folder and say
/// what an entry's `Meta` is; this keeps the books. Thread-safe.
public final class DiskLRU<Meta: Sendable>: Sendable {
    public struct Entry: Sendable {
        public var meta: Meta
        public var size: Int64
        /// Its neighbours in the order of use: toward the most recent, and the least.
        var newer: String?
        var older: String?
    }

    struct State: Sendable {
        var entries: [String: Entry] = [:]
        /// The most and the least recently used.
        var newest: String?
        var oldest: String?
        var total: Int64 = 0
        var evictions = 0

        mutating func unlink(_ key: String) {
            guard let e = entries[key] else { return }
            if let n = e.newer { entries[n]?.older = e.older } else { newest = e.older }
            if let o = e.older { entries[o]?.newer = e.newer } else { oldest = e.newer }
            entries[key]?.newer = nil
            entries[key]?.older = nil
        }

        /// `key` (in `entries`, unlinked) as the most recently used.
        mutating func linkNewest(_ key: String) {
            entries[key]?.older = newest
            entries[key]?.newer = nil
            if let n = newest { entries[n]?.newer = key }
            newest = key
            if oldest == nil { oldest = key }
        }
    }

    public let maxBytes: Int64
    /// The folder's block size: what a file occupies is its size rounded up to whole
    /// blocks, and that is what counts against `maxBytes` (a 1-byte result takes a 4 KiB
    /// block on ext4), as nginx's cache counts it. An entry's `size` stays its length.
    public let blockSize: Int64
    /// The most entries one insert evicts; a larger entry than those free is made room for
    /// over the next inserts.
    public static var evictionsPerInsert: Int { 64 }
    private let state = Mutex(State())

    public init(maxBytes: Int64, blockSize: Int64 = 4096) {
        self.maxBytes = maxBytes
        self.blockSize = max(1, blockSize)
    }

    /// The block size of the file system that holds, or will hold, `path` (the nearest
    /// folder of it that exists; 4096 when none can be told).
    public static func blockSize(of path: String) -> Int64 {
        var at = path.isEmpty ? "." : path
        while true {
            var fs = statvfs()
            if statvfs(at, &fs) == 0, fs.f_bsize > 0 { return Int64(fs.f_bsize) }
            if let slash = at.lastIndex(of: "/") {
                guard at != "/" else { return 4096 }
                at = slash == at.startIndex ? "/" : String(at[..<slash])
            } else {
                guard at != "." else { return 4096 }
                at = "."
            }
        }
    }

    /// What `size` bytes occupy on disk: whole blocks.
    public func onDisk(_ size: Int64) -> Int64 { (max(0, size) + blockSize - 1) / blockSize * blockSize }

    /// The entry for `key`, marked as used now; nil when there is none.
    public func use(_ key: String) -> Entry? {
        state.withLock { s in
            guard let e = s.entries[key] else { return nil }
            if s.newest != key {
                s.unlink(key)
                s.linkNewest(key)
            }
            return e
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
    /// to make room (never `key` itself; at most `evictionsPerInsert`), whose files the
    /// caller removes.
    public func insert(_ key: String, _ meta: Meta, size: Int64) -> (replaced: Entry?, evicted: [(String, Entry)]) {
        state.withLock { s in
            let old = s.entries[key]
            if old != nil { s.unlink(key) }
            s.entries[key] = Entry(meta: meta, size: size)
            s.linkNewest(key)
            s.total += onDisk(size) - onDisk(old?.size ?? 0)
            return (old, evict(&s, keeping: key, most: Self.evictionsPerInsert))
        }
    }

    /// Takes an entry out; it, if it was there.
    @discardableResult
    public func remove(_ key: String) -> Entry? {
        state.withLock { s in
            guard let old = s.entries[key] else { return nil }
            s.unlink(key)
            s.entries[key] = nil
            s.total -= onDisk(old.size)
            return old
        }
    }

    /// The index anew, from what a scan of the folder found, the least recently used
    /// first (after a restart, the oldest written); those evicted to fit (all that must go).
    public func rebuild(_ found: [(key: String, meta: Meta, size: Int64)]) -> [(String, Entry)] {
        state.withLock { s in
            s = State()
            for f in found {
                if s.entries[f.key] != nil {
                    s.unlink(f.key)
                    s.total -= onDisk(s.entries[f.key]?.size ?? 0)
                }
                s.entries[f.key] = Entry(meta: f.meta, size: f.size)
                s.linkNewest(f.key)
                s.total += onDisk(f.size)
            }
            return evict(&s, keeping: nil, most: Int.max)
        }
    }

    /// Bytes held on disk (in whole blocks), entries, evictions so far.
    public var figures: (bytes: Int64, entries: Int, evictions: Int) {
        state.withLock { ($0.total, $0.entries.count, $0.evictions) }
    }

    /// From the tail, while over `maxBytes`: at most `most` entries, never `keeping`.
    private func evict(_ s: inout State, keeping: String?, most: Int) -> [(String, Entry)] {
        var doomed: [(String, Entry)] = []
        var at = s.oldest
        while s.total > maxBytes, doomed.count < most, let key = at {
            at = s.entries[key]?.newer
            if key == keeping { continue }
            guard let e = s.entries[key] else { break }
            s.unlink(key)
            s.entries[key] = nil
            s.total -= onDisk(e.size)
            s.evictions += 1
            doomed.append((key, e))
        }
        return doomed
    }
}
