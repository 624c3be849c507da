import Cache
import Foundation
import Glibc
import Testing

/// The caches' cap counts the disk (issue 38's "the cap counts the disk"): a result counts
/// what it occupies, whole blocks of its folder's file system, so the folder's `du` stays
/// within `cache.maxBytes` however small the results are.
@Suite struct DiskBlocksTests {
    static func folder() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aspect-blocks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.path
    }

    /// What the files under `dir` occupy, as `du` counts it (st_blocks of 512 bytes).
    static func du(_ dir: String) -> Int64 {
        var total: Int64 = 0
        let files = FileManager.default.enumerator(atPath: dir)?.compactMap { $0 as? String } ?? []
        for name in files {
            var st = stat()
            if stat("\(dir)/\(name)", &st) == 0, (st.st_mode & S_IFMT) == S_IFREG { total += Int64(st.st_blocks) * 512 }
        }
        return total
    }

    @Test func aOneByteResultCountsOneBlock() throws {
        let dir = try Self.folder()
        let block = DiskLRU<String>.blockSize(of: dir)
        let cache = DiskCache(dir: dir, maxBytes: 1 << 20)
        #expect(cache.store(String(repeating: "a", count: 64), [7], format: "png"))
        #expect(cache.figures.bytes == block && cache.figures.entries == 1)
        let store = DiskResultStore(
            dir: dir + "-store", maxBytes: 1 << 20, recheckMs: 0, openFiles: 4, memoryFileBytes: 0)
        #expect(store.keep(String(repeating: "a", count: 64), [7], kind: "png", source: "s"))
        #expect(store.result(String(repeating: "a", count: 64))?.size == 1, "a hit still sends 1 byte")
        // block + 1 bytes take two blocks.
        #expect(
            cache.store(String(repeating: "b", count: 64), [UInt8](repeating: 1, count: Int(block) + 1), format: "png"))
        #expect(cache.figures.bytes == 3 * block)
    }

    @Test func theFoldersDiskUseStaysWithinTheCap() throws {
        let dir = try Self.folder()
        let block = DiskLRU<String>.blockSize(of: dir)
        // Room for 20 blocks; 200 results of 100 bytes each would be 20,000 bytes apparent.
        let cache = DiskCache(dir: dir, maxBytes: 20 * block)
        for i in 0..<200 {
            let key = String(format: "%064x", i)
            #expect(cache.store(key, [UInt8](repeating: UInt8(i & 0xFF), count: 100), format: "png"))
        }
        #expect(cache.figures.entries <= 20 && cache.figures.bytes <= 20 * block, "\(cache.figures)")
        #expect(Self.du(dir) <= 20 * block + block, "du \(Self.du(dir)) against a cap of \(20 * block)")
    }
}
