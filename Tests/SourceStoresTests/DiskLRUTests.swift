import Cache
import Hashing
import TestSupport
import Testing

/// The caches' index: the least recently used goes first, a use makes an entry the most
/// recent, one insert evicts a bounded number of entries (the rest over the next inserts),
/// and the flat table agrees with a plain model through any mix of inserts, uses and
/// removals.
@Suite struct DiskLRUTests {
    static func key(_ name: String) -> Digest {
        Digest(hex: SHA256.hex(name)) ?? Digest(hex: String(repeating: "0", count: 64))!
    }

    @Test func theLeastRecentlyUsedGoesFirst() {
        // Room for 3 blocks of 4096.
        let lru = DiskLRU<Int>(maxBytes: 3 * 4096, blockSize: 4096)
        let k = (0..<5).map { Self.key("k\($0)") }
        for i in 0..<3 { _ = lru.insert(k[i], i, size: 100) }
        _ = lru.use(k[0])  // k1 is now the least recently used
        let (_, evicted) = lru.insert(k[3], 3, size: 100)
        #expect(evicted.map(\.0) == [k[1]])
        #expect(lru.contains(k[0]) && lru.contains(k[2]) && lru.contains(k[3]) && !lru.contains(k[1]))
        // Replacing an entry makes it the newest and counts it once.
        #expect(lru.insert(k[2], 22, size: 100).replaced?.meta == 2)
        #expect(lru.figures.entries == 3 && lru.figures.bytes == 3 * 4096)
        #expect(lru.insert(k[4], 4, size: 100).evicted.map(\.0) == [k[0]])
        #expect(lru.remove(k[3])?.meta == 3 && lru.figures.bytes == 2 * 4096)
        #expect(lru.use(k[2])?.meta == 22)
    }

    @Test func oneInsertEvictsABoundedNumber() {
        let n = 1000
        let lru = DiskLRU<Int>(maxBytes: Int64(n) * 4096, blockSize: 4096)
        for i in 0..<n { _ = lru.insert(Self.key("k\(i)"), i, size: 1) }
        // An entry the size of 200 blocks: room is made 64 entries at a time.
        let first = lru.insert(Self.key("big"), -1, size: 200 * 4096)
        #expect(first.evicted.count == DiskLRU<Int>.evictionsPerInsert)
        #expect(first.evicted.map(\.0) == (0..<64).map { Self.key("k\($0)") }, "oldest first")
        var inserts = 1
        while lru.figures.bytes > Int64(n) * 4096 {
            _ = lru.insert(Self.key("small\(inserts)"), inserts, size: 1)
            inserts += 1
        }
        #expect(inserts > 3 && lru.contains(Self.key("big")), "\(inserts) inserts to come back under the cap")
    }

    @Test func aFillGoesBehindWhatWasUsedAndTrimsOldestFirst() {
        let lru = DiskLRU<Int>(maxBytes: 10 * 4096, blockSize: 4096)
        // Used while the fill ran: the newest, whatever the fill finds.
        _ = lru.insert(Self.key("live"), -1, size: 1)
        // Found on disk, the most recently written first; "k99" is also the live one's twin.
        lru.reserve(101)
        lru.addOlder((0..<100).reversed().map { (key: Self.key("k\($0)"), meta: $0, size: Int64(1)) })
        lru.addOlder([(key: Self.key("live"), meta: 7, size: Int64(1))])
        #expect(lru.figures.entries == 101)
        var evicted: [Digest] = []
        while case let some = lru.trim(most: 7), !some.isEmpty { evicted += some.map(\.0) }
        #expect(evicted == (0..<91).map { Self.key("k\($0)") })
        #expect(lru.use(Self.key("live"))?.meta == -1, "a fill leaves an entry already there as it is")
        #expect(lru.contains(Self.key("k99")) && !lru.contains(Self.key("k90")) && lru.figures.entries == 10)
    }

    /// Random inserts, uses and removals against a dictionary and a list in the order of
    /// use: the same entries, the same evictions, in the same order. Seeded, so a failure
    /// replays.
    @Test func theFlatTableAgreesWithAPlainModel() {
        var rng = SeededRandom(seed: 0xD15C_1B0)
        let cap = 300
        let lru = DiskLRU<Int>(maxBytes: Int64(cap) * 4096, blockSize: 4096)
        var order: [Digest] = []  // least recent first
        var model: [Digest: (meta: Int, blocks: Int)] = [:]
        func total() -> Int { model.values.reduce(0) { $0 + $1.blocks } }
        let keys = (0..<600).map { Self.key("r\($0)") }
        for step in 0..<20_000 {
            let k = keys[Int.random(in: 0..<keys.count, using: &rng)]
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<5:
                let blocks = Int.random(in: 1...3, using: &rng)
                let (replaced, evicted) = lru.insert(k, step, size: Int64(blocks) * 4096)
                #expect(replaced?.meta == model[k]?.meta)
                order.removeAll { $0 == k }
                order.append(k)
                model[k] = (step, blocks)
                var expected: [Digest] = []
                while total() > cap, expected.count < DiskLRU<Int>.evictionsPerInsert,
                    let victim = order.first(where: { $0 != k })
                {
                    expected.append(victim)
                    order.removeAll { $0 == victim }
                    model[victim] = nil
                }
                #expect(evicted.map(\.0) == expected)
            case 5..<8:
                #expect(lru.use(k)?.meta == model[k]?.meta)
                if model[k] != nil {
                    order.removeAll { $0 == k }
                    order.append(k)
                }
            default:
                #expect(lru.remove(k)?.meta == model[k]?.meta)
                model[k] = nil
                order.removeAll { $0 == k }
            }
            #expect(lru.figures.entries == model.count && lru.figures.bytes == Int64(total()) * 4096)
        }
        for k in keys { #expect(lru.contains(k) == (model[k] != nil)) }
    }

    @Test func aDigestIsItsHex() {
        let hex = SHA256.hex("a")
        #expect(Digest(hex: hex)?.hex == hex && Digest(hex: hex.uppercased())?.hex == hex)
        #expect(Digest(hex: String(hex.dropLast())) == nil && Digest(hex: hex + "0") == nil)
        #expect(Digest(hex: String(hex.dropLast()) + "g") == nil)
    }
}
