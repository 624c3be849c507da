import Glibc
import Synchronization

/// What the two caches on disk share: an index of entries, each with what it occupies on
/// disk, kept under `maxBytes` by letting the least recently used go. The entries are
/// linked in the order of their use, so a use is a move to the front and an eviction takes
/// the tail: each insert evicts at most `evictionsPerInsert` entries, and nothing walks or
/// sorts the whole index (a cache of a million results does not stall its hits while it
/// evicts).
///
/// The index is a flat table: one fixed-size record per entry in one array (a 32-byte key,
/// its blocks, its two neighbours as indices, and `Meta`), found through an open-addressed
/// table of 4-byte slots. For the result store (`Meta` of 2 bytes) that is 48 bytes a
/// record and 5–11 bytes of slots: about 56 bytes an entry, with no object per entry. The
/// records stay dense: a removed one's place is taken by the last.
///
/// The result store (`DiskCache`) and the source cache (`SourceCache`) each lay out their
/// folder, fill the index from it in the background (`addOlder`, then `trim`) and say what
/// an entry's `Meta` is; this keeps the books. Thread-safe.
public final class DiskLRU<Meta: Sendable>: Sendable {
    public struct Entry: Sendable {
        public var meta: Meta
        /// What it occupies on disk: whole blocks.
        public var bytes: Int64
    }

    struct Record {
        var key: Digest
        var blocks: UInt32
        /// Its neighbours in the order of use (indices into `records`; `none` at an end).
        var newer: UInt32
        var older: UInt32
        var meta: Meta
    }

    static var none: UInt32 { .max }

    struct Table: Sendable {
        var records: [Record] = []
        /// 0: empty; else a record's index + 1. A power of two long, at most 3/4 full.
        var slots = [UInt32](repeating: 0, count: 1024)
        var newest = DiskLRU.none
        var oldest = DiskLRU.none
        var blocks: Int64 = 0
        var evictions = 0

        var mask: Int { slots.count - 1 }

        func home(_ key: Digest) -> Int { Int(truncatingIfNeeded: key.a ^ key.c) & mask }

        /// The slot holding `key`, or the empty one where it would go.
        func slot(_ key: Digest) -> (at: Int, found: Bool) {
            var i = home(key)
            while true {
                let s = slots[i]
                if s == 0 { return (i, false) }
                if records[Int(s - 1)].key == key { return (i, true) }
                i = (i + 1) & mask
            }
        }

        func index(_ key: Digest) -> Int? {
            let (at, found) = slot(key)
            return found ? Int(slots[at] - 1) : nil
        }

        /// Room in the slots for `count` records without growing again.
        mutating func reserve(_ count: Int) {
            records.reserveCapacity(count)
            var size = slots.count
            while count > size / 4 * 3 { size *= 2 }
            guard size != slots.count else { return }
            slots = [UInt32](repeating: 0, count: size)
            for (i, r) in records.enumerated() { slots[slot(r.key).at] = UInt32(i + 1) }
        }

        mutating func unlink(_ i: Int) {
            let r = records[i]
            if r.newer != DiskLRU.none { records[Int(r.newer)].older = r.older } else { newest = r.older }
            if r.older != DiskLRU.none { records[Int(r.older)].newer = r.newer } else { oldest = r.newer }
            records[i].newer = DiskLRU.none
            records[i].older = DiskLRU.none
        }

        mutating func linkNewest(_ i: Int) {
            records[i].older = newest
            records[i].newer = DiskLRU.none
            if newest != DiskLRU.none { records[Int(newest)].newer = UInt32(i) }
            newest = UInt32(i)
            if oldest == DiskLRU.none { oldest = UInt32(i) }
        }

        mutating func linkOldest(_ i: Int) {
            records[i].newer = oldest
            records[i].older = DiskLRU.none
            if oldest != DiskLRU.none { records[Int(oldest)].older = UInt32(i) }
            oldest = UInt32(i)
            if newest == DiskLRU.none { newest = UInt32(i) }
        }

        /// A new record, unlinked; its index.
        mutating func add(_ key: Digest, _ meta: Meta, blocks: UInt32, at slot: Int) -> Int {
            if records.count + 1 > slots.count / 4 * 3 {
                reserve(max(records.count + 1, records.count * 2))
                return add(key, meta, blocks: blocks, at: self.slot(key).at)
            }
            records.append(Record(key: key, blocks: blocks, newer: DiskLRU.none, older: DiskLRU.none, meta: meta))
            slots[slot] = UInt32(records.count)
            self.blocks += Int64(blocks)
            return records.count - 1
        }

        /// Takes record `i` out (linked or not): its slot emptied (the probe chain after it
        /// shifted back), and the last record moved into its place.
        mutating func delete(_ i: Int) -> Record {
            unlink(i)
            let gone = records[i]
            blocks -= Int64(gone.blocks)
            var hole = slot(gone.key).at
            slots[hole] = 0
            var j = hole
            while true {
                j = (j + 1) & mask
                let s = slots[j]
                if s == 0 { break }
                let h = home(records[Int(s - 1)].key)
                // The record at j may move back to the hole unless its home lies in (hole, j].
                let stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j)
                if !stays {
                    slots[hole] = s
                    slots[j] = 0
                    hole = j
                }
            }
            let last = records.count - 1
            if i != last {
                let moved = records[last]
                records[i] = moved
                slots[slot(moved.key).at] = UInt32(i + 1)
                if moved.newer != DiskLRU.none {
                    records[Int(moved.newer)].older = UInt32(i)
                } else {
                    newest = UInt32(i)
                }
                if moved.older != DiskLRU.none {
                    records[Int(moved.older)].newer = UInt32(i)
                } else {
                    oldest = UInt32(i)
                }
            }
            records.removeLast()
            return gone
        }
    }

    public let maxBytes: Int64
    /// The folder's block size: what a file occupies is its size rounded up to whole
    /// blocks, and that is what counts against `maxBytes` (a 1-byte result takes a 4 KiB
    /// block on ext4), as nginx's cache counts it.
    public let blockSize: Int64
    /// The most entries one insert evicts; a larger entry than those free is made room for
    /// over the next inserts.
    public static var evictionsPerInsert: Int { 64 }
    private let state = Mutex(Table())

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
    public func onDisk(_ size: Int64) -> Int64 { Int64(blocks(size)) * blockSize }

    private func blocks(_ size: Int64) -> UInt32 {
        UInt32(clamping: (max(0, size) + blockSize - 1) / blockSize)
    }

    private func entry(_ r: Record) -> Entry { Entry(meta: r.meta, bytes: Int64(r.blocks) * blockSize) }

    /// The entry for `key`, marked as used now; nil when there is none.
    public func use(_ key: Digest) -> Entry? {
        state.withLock { t in
            guard let i = t.index(key) else { return nil }
            if t.newest != UInt32(i) {
                t.unlink(i)
                t.linkNewest(i)
            }
            return entry(t.records[i])
        }
    }

    /// Whether there is an entry for `key` (not marked as used).
    public func contains(_ key: Digest) -> Bool { state.withLock { $0.index(key) != nil } }

    /// Changes an entry's `Meta` in place, if it is there.
    public func update(_ key: Digest, _ change: (inout Meta) -> Void) {
        state.withLock { t in
            guard let i = t.index(key) else { return }
            change(&t.records[i].meta)
        }
    }

    /// Puts an entry in as the most recently used; the one it replaced, and those evicted
    /// to make room (never `key` itself; at most `evictionsPerInsert`), whose files the
    /// caller removes.
    public func insert(_ key: Digest, _ meta: Meta, size: Int64) -> (replaced: Entry?, evicted: [(Digest, Entry)]) {
        state.withLock { t in
            let (at, found) = t.slot(key)
            var old: Entry?
            let i: Int
            if found {
                i = Int(t.slots[at] - 1)
                old = entry(t.records[i])
                t.unlink(i)
                t.blocks += Int64(blocks(size)) - Int64(t.records[i].blocks)
                t.records[i].blocks = blocks(size)
                t.records[i].meta = meta
            } else {
                i = t.add(key, meta, blocks: blocks(size), at: at)
            }
            t.linkNewest(i)
            return (old, evict(&t, keeping: key, most: Self.evictionsPerInsert))
        }
    }

    /// Entries found on disk, the most recently used first, put in as older than any
    /// already there (which were used since the index began); a key already there is left
    /// as it is. Nothing is evicted: `trim` does that. Called in batches by a background
    /// fill, so hits go on between them.
    public func addOlder(_ found: some Sequence<(key: Digest, meta: Meta, size: Int64)>) {
        state.withLock { t in
            for f in found {
                let (at, present) = t.slot(f.key)
                guard !present else { continue }
                t.linkOldest(t.add(f.key, f.meta, blocks: blocks(f.size), at: at))
            }
        }
    }

    /// Room for `count` entries in all, made now (once, before a fill) rather than by
    /// growing the table while it serves.
    public func reserve(_ count: Int) { state.withLock { $0.reserve(count) } }

    /// Evicts from the tail while over `maxBytes`, at most `most` entries; those evicted.
    public func trim(most: Int) -> [(Digest, Entry)] { state.withLock { evict(&$0, keeping: nil, most: most) } }

    /// Takes an entry out; it, if it was there.
    @discardableResult
    public func remove(_ key: Digest) -> Entry? {
        state.withLock { t in
            guard let i = t.index(key) else { return nil }
            return entry(t.delete(i))
        }
    }

    /// Bytes held on disk (in whole blocks), entries, evictions so far.
    public var figures: (bytes: Int64, entries: Int, evictions: Int) {
        state.withLock { ($0.blocks * blockSize, $0.records.count, $0.evictions) }
    }

    /// From the tail, while over `maxBytes`: at most `most` entries, never `keeping`.
    private func evict(_ t: inout Table, keeping: Digest?, most: Int) -> [(Digest, Entry)] {
        var doomed: [(Digest, Entry)] = []
        var at = t.oldest
        while t.blocks * blockSize > maxBytes, doomed.count < most, at != Self.none {
            let i = Int(at)
            let r = t.records[i]
            if r.key == keeping {
                at = r.newer
                continue
            }
            // The record moved into i's place may be the next one up: read it after.
            let next = r.newer == UInt32(t.records.count - 1) ? UInt32(i) : r.newer
            _ = t.delete(i)
            t.evictions += 1
            doomed.append((r.key, entry(r)))
            at = next
        }
        return doomed
    }
}
