import Cache
import Testing

/// The caches' index: the least recently used goes first, a use makes an entry the most
/// recent, and one insert evicts a bounded number of entries (the rest over the next
/// inserts), so no insert walks the whole index.
@Suite struct DiskLRUTests {
    @Test func theLeastRecentlyUsedGoesFirst() {
        // Room for 3 blocks of 4096.
        let lru = DiskLRU<Int>(maxBytes: 3 * 4096, blockSize: 4096)
        for i in 0..<3 { _ = lru.insert("k\(i)", i, size: 100) }
        _ = lru.use("k0")  // k1 is now the least recently used
        let (_, evicted) = lru.insert("k3", 3, size: 100)
        #expect(evicted.map(\.0) == ["k1"])
        #expect(lru.contains("k0") && lru.contains("k2") && lru.contains("k3") && !lru.contains("k1"))
        // Replacing an entry makes it the newest and counts it once.
        _ = lru.insert("k2", 22, size: 100)
        #expect(lru.figures.entries == 3 && lru.figures.bytes == 3 * 4096)
        #expect(lru.insert("k4", 4, size: 100).evicted.map(\.0) == ["k0"])
        #expect(lru.remove("k3")?.meta == 3 && lru.figures.bytes == 2 * 4096)
    }

    @Test func oneInsertEvictsABoundedNumber() {
        let n = 1000
        let lru = DiskLRU<Int>(maxBytes: Int64(n) * 4096, blockSize: 4096)
        for i in 0..<n { _ = lru.insert("k\(i)", i, size: 1) }
        // An entry the size of 200 blocks: room is made 64 entries at a time.
        let first = lru.insert("big", -1, size: 200 * 4096)
        #expect(first.evicted.count == DiskLRU<Int>.evictionsPerInsert)
        #expect(first.evicted.map(\.0) == (0..<64).map { "k\($0)" }, "oldest first")
        var inserts = 1
        while lru.figures.bytes > Int64(n) * 4096 {
            _ = lru.insert("small\(inserts)", inserts, size: 1)
            inserts += 1
        }
        #expect(inserts > 3 && lru.contains("big"), "\(inserts) inserts to come back under the cap")
    }

    @Test func aRebuildEvictsAllThatMustGoOldestFirst() {
        let lru = DiskLRU<Int>(maxBytes: 10 * 4096, blockSize: 4096)
        let evicted = lru.rebuild((0..<100).map { (key: "k\($0)", meta: $0, size: Int64(1)) })
        #expect(evicted.count == 90 && evicted.first?.0 == "k0" && lru.contains("k99") && !lru.contains("k89"))
    }
}
