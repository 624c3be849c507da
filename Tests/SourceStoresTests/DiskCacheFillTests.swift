import Core
import Foundation
import Glibc
import Hashing
import Stores
import Testing

@testable import Cache

/// A cache ready at once (issue 38): the index is filled from the folder in the
/// background, a key not indexed yet is found on disk, a purge finds every variant before
/// the fill is done, a folder over its cap is trimmed after it, and a folder laid out by
/// an earlier version (01478d4's `XX/KEY.KIND` and `by-source/`) goes on being served.
@Suite struct DiskCacheFillTests {
    static func key(_ name: String) -> String { SHA256.hex(name) }

    /// Writes a result as every version since the disk cache's first has: `XX/KEY.KIND`,
    /// written `age` seconds ago.
    static func write(_ dir: String, _ key: String, _ kind: String, bytes: [UInt8], age: Int = 0) throws {
        let shard = "\(dir)/\(key.prefix(2))"
        try FileManager.default.createDirectory(atPath: shard, withIntermediateDirectories: true)
        let path = "\(shard)/\(key).\(kind)"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        let when = time(nil) - age
        var times = [timeval(tv_sec: when, tv_usec: 0), timeval(tv_sec: when, tv_usec: 0)]
        #expect(utimes(path, &times) == 0)
    }

    static func list(_ dir: String, source: String, _ keys: [String]) throws {
        try FileManager.default.createDirectory(atPath: "\(dir)/by-source", withIntermediateDirectories: true)
        let text = keys.map { $0 + "\n" }.joined()
        #expect(
            FileManager.default.createFile(atPath: "\(dir)/by-source/\(SHA256.hex(source))", contents: Data(text.utf8)))
    }

    static func store(_ dir: String, maxBytes: Int64 = 1 << 30, background: Bool) -> DiskResultStore {
        DiskResultStore(
            dir: dir, maxBytes: maxBytes, recheckMs: 0, openFiles: 16, memoryFileBytes: 1 << 16,
            fillsInBackground: background)
    }

    @Test func anEarlierVersionsFolderIsServedBeforeAndAfterTheFill() throws {
        let dir = try DiskBlocksTests.folder()
        let (a, b, c) = (Self.key("a"), Self.key("b"), Self.key("c"))
        try Self.write(dir, a, "jpeg", bytes: [1, 2, 3])
        try Self.write(dir, b, "webp-q63", bytes: [4, 5])
        try Self.write(dir, c, "json", bytes: Array("{}".utf8))
        try Self.write(dir, Self.key("unknown"), "bmp", bytes: [9])
        let temp = "\(dir)/\(a.prefix(2))/.tmp-\(a)-1-1"
        // Left by a process that ended before this one began.
        #expect(FileManager.default.createFile(atPath: temp, contents: Data([0])))
        var before = [timeval(tv_sec: time(nil) - 60, tv_usec: 0), timeval(tv_sec: time(nil) - 60, tv_usec: 0)]
        #expect(utimes(temp, &before) == 0)
        try Self.list(dir, source: "photo.jpg", [a, b])

        let store = Self.store(dir, background: false)
        #expect(store.cache.isFilling)
        // Before the fill: found on disk, with its kind (a chosen quality included) and size.
        let hit = try #require(store.result(b))
        #expect(hit.kind == "webp-q63" && hit.size == 2 && hit.bytes == [4, 5])
        store.cache.fill()
        #expect(!store.cache.isFilling)
        #expect(store.figures.entries == 3, "the three results this version writes; not the .bmp")
        #expect(store.result(a)?.bytes == [1, 2, 3] && store.result(c)?.kind == "json")
        #expect(!FileManager.default.fileExists(atPath: temp), "a temporary file is removed by the fill")
        // The purge lists an earlier version wrote are read as they are.
        #expect(store.purge(source: "photo.jpg") == [a, b])
        #expect(store.result(a) == nil && store.result(b) == nil && store.figures.entries == 1)
    }

    @Test func aPurgeFindsEveryVariantWhileTheIndexIsFilling() throws {
        let dir = try DiskBlocksTests.folder()
        let variants = (0..<5).map { Self.key("v\($0)") }
        for (i, k) in variants.enumerated() { try Self.write(dir, k, i == 0 ? "png-q40" : "png", bytes: [UInt8(i)]) }
        try Self.list(dir, source: "cat.png", variants)
        let other = Self.key("other")
        try Self.write(dir, other, "png", bytes: [42])

        let store = Self.store(dir, background: false)
        #expect(store.cache.isFilling && store.figures.entries == 0)
        // One variant asked for first: indexed from the disk before the fill reaches it.
        #expect(store.result(variants[1])?.bytes == [1] && store.figures.entries == 1)
        #expect(store.purge(source: "cat.png") == Set(variants))
        // The fill, which may have listed them before, does not bring them back.
        store.cache.fill()
        for k in variants { #expect(store.result(k) == nil) }
        #expect(store.result(other)?.bytes == [42] && store.figures.entries == 1)
        let left = FileManager.default.enumerator(atPath: dir)?.compactMap { $0 as? String } ?? []
        #expect(left.filter { $0.hasSuffix(".png") || $0.hasSuffix(".png-q40") } == ["\(other.prefix(2))/\(other).png"])
    }

    @Test func aFolderOverItsCapServesAtOnceAndIsTrimmedToIt() throws {
        let dir = try DiskBlocksTests.folder()
        let block = DiskLRU<UInt16>.blockSize(of: dir)
        // 300 one-block results, the oldest written first; a cap of 100 blocks.
        let keys = (0..<300).map { Self.key("r\($0)") }
        for (i, k) in keys.enumerated() { try Self.write(dir, k, "avif", bytes: [UInt8(i & 0xFF)], age: 1000 - i) }
        let store = Self.store(dir, maxBytes: 100 * block, background: true)
        // Served at once, whether or not the fill has reached it.
        #expect(store.result(keys[299])?.bytes == [UInt8(299 & 0xFF)])
        let deadline = Date().addingTimeInterval(30)
        // Indexing ends once the trim's files are gone too.
        while store.isIndexing, Date() < deadline { usleep(10_000) }
        #expect(!store.isIndexing)
        #expect(store.figures.entries == 100 && store.figures.bytes == 100 * block)
        #expect(DiskBlocksTests.du(dir) <= 100 * block + block, "du \(DiskBlocksTests.du(dir))")
        // The most recently written (and the one just used) stay; the oldest went.
        #expect(store.result(keys[299]) != nil && store.result(keys[250]) != nil)
        #expect(store.result(keys[0]) == nil && store.result(keys[150]) == nil)
    }

    @Test func aPurgeListIsCompactedAsItsKeysAreEvicted() throws {
        let dir = try DiskBlocksTests.folder()
        let block = DiskLRU<UInt16>.blockSize(of: dir)
        let store = Self.store(dir, maxBytes: 10 * block, background: true)
        let deadline = Date().addingTimeInterval(30)
        while store.cache.isFilling, Date() < deadline { usleep(10_000) }
        // 2,000 variants of one source through a cache with room for 10: the list on
        // disk stays near the compaction size, not 2,000 lines.
        for i in 0..<2000 { #expect(store.keep(Self.key("w\(i)"), [1], kind: "png", source: "big.jpg")) }
        var st = stat()
        #expect(stat("\(dir)/by-source/\(SHA256.hex("big.jpg"))", &st) == 0)
        #expect(Int(st.st_size) <= SourceIndex.compactBytes + 65, "\(st.st_size) bytes")
        let purged = store.purge(source: "big.jpg")
        #expect(purged.count == 10 && purged.contains(Self.key("w1999")))
    }

    @Test func aSourceWithThousandsOfLiveVariantsIsNotReadWholeOnEveryKeep() throws {
        let dir = try DiskBlocksTests.folder()
        let store = Self.store(dir, background: false)
        // 3,000 variants, all held: the list grows to 195,000 bytes and is looked over as it
        // passes 32, 64 and 128 KiB, not on each of the 2,500 keeps past the first 32 KiB.
        for i in 0..<3000 { #expect(store.keep(Self.key("v\(i)"), [1], kind: "png", source: "big.jpg")) }
        #expect(store.bySource.looks.load(ordering: .relaxed) == 3)
        let purged = store.purge(source: "big.jpg")
        #expect(purged.count == 3000 && purged.contains(Self.key("v0")) && purged.contains(Self.key("v2999")))
    }

    @Test func aLookIsDueAtEachPowerOfTwoFrom32KiB() {
        let k = SourceIndex.compactBytes
        #expect(!SourceIndex.crossesALookSize(from: 0, to: 65))
        #expect(!SourceIndex.crossesALookSize(from: k - 66, to: k - 1))
        #expect(SourceIndex.crossesALookSize(from: k - 1, to: k + 64))
        #expect(!SourceIndex.crossesALookSize(from: k, to: k + 65))
        #expect(!SourceIndex.crossesALookSize(from: 2 * k - 66, to: 2 * k - 1))
        #expect(SourceIndex.crossesALookSize(from: 2 * k - 1, to: 2 * k + 64))
        #expect(SourceIndex.crossesALookSize(from: 4 * k - 10, to: 4 * k + 55))
        #expect(!SourceIndex.crossesALookSize(from: 3 * k, to: 3 * k + 65))
    }
}

/// A result's kind through the index's two bytes: `format=best`'s choice survives, so a
/// hit says it (`X-Format-Chosen`) as the render did.
@Suite struct ResultKindCodeTests {
    @Test func everyKindThisVersionWritesRoundTrips() throws {
        var kinds = [ResultKind.info]
        for format in ImageFormat.allCases {
            kinds += [ResultKind.image(format, quality: nil), ResultKind.image(format, quality: 62)]
        }
        for name in BestChoice.names {
            let choice = try #require(BestChoice(name: name))
            kinds += [ResultKind.image(choice.format, quality: choice.lossless ? nil : 47, chosen: choice)]
        }
        for kind in kinds {
            #expect(ResultKind.isKnown(kind), "\(kind)")
            let code = try #require(Kinds.code(kind), "\(kind)")
            #expect(Kinds.name(code) == kind)
        }
        #expect(ResultKind.chosen("webp-q47-best") == BestChoice(format: .webp, lossless: false))
        #expect(ResultKind.chosen("webp-best-lossless") == BestChoice(format: .webp, lossless: true))
        #expect(ResultKind.quality("avif-q47-best") == 47 && ResultKind.chosen("avif-q47") == nil)
        for bad in ["webp-lossless", "jpeg-best-lossless", "png-q0", "avif-best-q40", "gif-q101", "webp-q40-best-x"] {
            #expect(!ResultKind.isKnown(bad), "\(bad)")
        }
    }
}
