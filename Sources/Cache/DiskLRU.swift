import Glibc
import Synchronization
import Syscalls

/// What the two caches on disk share: an index of entries, each with its size in bytes,
/// kept under `maxBytes` of disk by letting the least recently used go (down to 90%, so eviction
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
    /// The folder's block size: what a file occupies is its size rounded up to whole
    /// blocks, and that is what counts against `maxBytes` (a 1-byte result takes a 4 KiB
    /// block on ext4), as nginx's cache counts it. An entry's `size` stays its length.
    public let blockSize: Int64
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
            s.total += onDisk(size) - onDisk(old?.size ?? 0)
            return (old, evict(&s, keeping: key))
        }
    }

    /// Takes an entry out; it, if it was there.
    @discardableResult
    public func remove(_ key: String) -> Entry? {
        state.withLock { s in
            guard let old = s.entries.removeValue(forKey: key) else { return nil }
            s.total -= onDisk(old.size)
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
                s.total += onDisk(f.size)
            }
            return evict(&s, keeping: nil)
        }
    }

    /// Bytes held on disk (in whole blocks), entries, evictions so far.
    public var figures: (bytes: Int64, entries: Int, evictions: Int) {
        state.withLock { ($0.total, $0.entries.count, $0.evictions) }
    }

    private func evict(_ s: inout State, keeping: String?) -> [(String, Entry)] {
        guard s.total > maxBytes else { return [] }
        var doomed: [(String, Entry)] = []
        for (key, e) in s.entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
            if s.total <= maxBytes / 10 * 9 { break }
            if key == keeping { continue }
            s.entries[key] = nil
            s.total -= onDisk(e.size)
            s.evictions += 1
            doomed.append((key, e))
        }
        return doomed
    }
}
