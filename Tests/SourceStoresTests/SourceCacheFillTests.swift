import Cache
import Foundation
import Glibc
import Testing

@testable import SourceStores

/// The source cache on the same footing as the result store (issue 38): its index is
/// filled in the background, a source is found from its record on disk before that, a
/// folder over its cap is trimmed after, and leftovers of an earlier process go.
@Suite struct SourceCacheFillTests {
    static func keep(_ cache: SourceCache, _ src: String, _ bytes: Int) throws {
        let temp = try #require(cache.temporaryFile())
        let body = [UInt8](repeating: 7, count: bytes)
        #expect(body.withUnsafeBytes { write(temp.fd, $0.baseAddress, $0.count) } == bytes)
        close(temp.fd)
        let record = SourceCache.Record(src: src, etag: "\"\(src)\"", lastModified: "", bytes: Int64(bytes), digest: "")
        #expect(cache.keep(record, body: temp.path, at: 1))
    }

    static func settled(_ cache: SourceCache, until done: () -> Bool = { true }) {
        let deadline = Date().addingTimeInterval(30)
        while cache.isFilling || !done(), Date() < deadline { usleep(10_000) }
    }

    @Test func aFolderIsServedAtOnceAndIndexedInTheBackground() throws {
        let dir = try DiskBlocksTests.folder()
        let first = SourceCache(dir: dir, maxBytes: 1 << 30)
        Self.settled(first)
        for i in 0..<3 { try Self.keep(first, "https://origin/\(i).jpg", 1000 + i) }
        // Left by a process that ended: a half-written download and a body whose record
        // never came.
        for name in [".tmp-1-1", String(repeating: "a", count: 64) + ".0123456789abcdef.src"] {
            let path = "\(dir)/\(name)"
            #expect(FileManager.default.createFile(atPath: path, contents: Data([1])))
            var old = [timeval(tv_sec: time(nil) - 60, tv_usec: 0), timeval(tv_sec: time(nil) - 60, tv_usec: 0)]
            #expect(utimes(path, &old) == 0)
        }

        let again = SourceCache(dir: dir, maxBytes: 1 << 30)
        // At once, whether from the index or from the record: never checked since start.
        let e = try #require(again.entry("https://origin/1.jpg"))
        #expect(e.record.bytes == 1001 && e.record.etag == "\"https://origin/1.jpg\"" && e.checkedAt == 0)
        Self.settled(again)
        #expect(again.figures.entries == 3)
        #expect(again.entry("https://origin/2.jpg")?.record.bytes == 1002 && again.entry("https://origin/9.jpg") == nil)
        let left = try FileManager.default.contentsOfDirectory(atPath: dir)
        #expect(!left.contains(".tmp-1-1") && !left.contains { $0.hasPrefix(String(repeating: "a", count: 64)) })
    }

    @Test func aFolderOverItsCapIsTrimmedAfterTheFill() throws {
        let dir = try DiskBlocksTests.folder()
        let block = DiskLRU<Int>.blockSize(of: dir)
        let first = SourceCache(dir: dir, maxBytes: 1 << 30)
        Self.settled(first)
        for i in 0..<10 { try Self.keep(first, "https://origin/\(i).jpg", 100) }
        let small = SourceCache(dir: dir, maxBytes: 4 * block)
        // The index is trimmed first, the evicted files unlinked after: wait for both.
        func bodies() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".src") }
        }
        Self.settled(small) { small.figures.bytes <= 4 * block && bodies().count <= 4 }
        #expect(small.figures.entries == 4 && small.figures.bytes == 4 * block)
        #expect(bodies().count == 4, "\(bodies())")
    }
}
