import Foundation
import Glibc
import Hashing
import Stores
import Synchronization
import Syscalls

/// The disk cache as the service's result store: hands back each hit open, from the files
/// it holds open for hits (`cache.openFiles`, the small ones in memory too), and forgets
/// an entry whose file has gone.
public final class DiskResultStore: ResultStore {
    public let cache: DiskCache
    private let openFiles: OpenFiles
    let bySource: SourceIndex

    /// `openFiles` results held open for hits; those up to `memoryFileBytes` in memory too.
    public convenience init(dir: String, maxBytes: Int64, recheckMs: Int, openFiles: Int, memoryFileBytes: Int) {
        self.init(
            dir: dir, maxBytes: maxBytes, recheckMs: recheckMs, openFiles: openFiles, memoryFileBytes: memoryFileBytes,
            fillsInBackground: true)
    }

    init(dir: String, maxBytes: Int64, recheckMs: Int, openFiles: Int, memoryFileBytes: Int, fillsInBackground: Bool) {
        let held = OpenFiles(capacity: openFiles, keepBytes: memoryFileBytes)
        self.openFiles = held
        cache = DiskCache(
            dir: dir, maxBytes: maxBytes, recheckMs: recheckMs, fillsInBackground: fillsInBackground
        ) { held.remove($0) }
        bySource = SourceIndex(dir: dir + "/by-source") { [cache] in cache.contains($0) }
    }

    public func result(_ key: String) -> StoredResult? {
        guard let hit = cache.lookup(key) else { return nil }
        guard let (file, size) = openFiles.file(key, path: hit.path) else {
            cache.forget(key)
            return nil
        }
        return StoredResult(kind: hit.format, size: size, body: file)
    }

    public func keep(_ key: String, _ bytes: [UInt8], kind: String, source: String) -> Bool {
        guard cache.store(key, bytes, format: kind) else { return false }
        bySource.add(key, source: source)
        return true
    }

    /// Every entry kept for `source` (results and `/info` answers), removed; those that were there.
    public func purge(source: String) -> Set<String> {
        Set(bySource.take(source).filter { cache.remove($0) })
    }
    public var problem: String? { cache.problem }
    public var figures: (bytes: Int64, entries: Int, evictions: Int) { cache.figures }
    public var isIndexing: Bool { cache.isFilling || cache.isTrimming }
}

/// Which keys are kept for which source, on disk beside the cache (`by-source/`): a file
/// per source, named by the SHA-256 of `src`, one key a line. Nothing of it is held in
/// memory, so the index stays at its records' size however many variants each source
/// has, and a purge finds every key before the index is filled. A keep appends a line;
/// a purge takes the file whole. Keys evicted since stay listed until the file is next
/// compacted or purged (a key no longer held is skipped). A file is looked over when a
/// keep takes it past a power of two from `compactBytes` up (32, 64, 128 KiB…), and
/// rewritten with the keys the cache still holds, once each, when at least half of its
/// lines are gone: so a source with thousands of live variants is read whole once each
/// time it doubles, not on every keep (each look reads every line), and a look costs no
/// more than the appends since the one before.
final class SourceIndex: Sendable {
    let dir: String
    /// Whether the cache still holds a key.
    private let isKept: @Sendable (String) -> Bool
    /// The first size at which a source's file is looked over: about 500 keys.
    static var compactBytes: Int { 32 << 10 }
    /// One writer at a time, so an append never meets a rewrite or a purge halfway.
    private let lock = Mutex(())
    /// How many times a file was read whole to be looked over (for the tests).
    let looks = Atomic(0)

    init(dir: String, isKept: @escaping @Sendable (String) -> Bool) {
        self.dir = dir
        self.isKept = isKept
    }

    func name(_ source: String) -> String { SHA256.hex(source) }

    func add(_ key: String, source: String) {
        let path = "\(dir)/\(name(source))"
        lock.withLock { _ in
            // Made here, not at start-up: the cache's folder may come later (cache.recheckMs).
            mkdir(dir, 0o755)
            let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard fd >= 0 else { return }
            defer { close(fd) }
            let line = Array((key + "\n").utf8)
            _ = line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            var st = stat()
            guard fstat(fd, &st) == 0, Self.crossesALookSize(from: Int(st.st_size) - line.count, to: Int(st.st_size))
            else { return }
            looks.add(1, ordering: .relaxed)
            let kept = Set(keys(path).filter(isKept))
            guard kept.count * 65 * 2 <= Int(st.st_size) else { return }
            write(path, kept)
        }
    }

    /// Whether a file grown from `before` bytes to `after` passed a power of two at or over
    /// `compactBytes`.
    static func crossesALookSize(from before: Int, to after: Int) -> Bool {
        guard after >= compactBytes, before >= 0 else { return false }
        // A power of two is passed where the number of binary digits grows.
        return before < compactBytes || before.leadingZeroBitCount > after.leadingZeroBitCount
    }

    /// The keys listed for `source`, once each, and the list gone.
    func take(_ source: String) -> [String] {
        let path = "\(dir)/\(name(source))"
        return lock.withLock { _ in
            defer { unlink(path) }
            return Array(Set(keys(path)))
        }
    }

    private func keys(_ path: String) -> [String] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { $0.utf8.count == 64 }.map(String.init)
    }

    /// A source's file, whole or not at all; none when no key is left.
    private func write(_ path: String, _ keys: Set<String>) {
        guard !keys.isEmpty else {
            unlink(path)
            return
        }
        let temp = path + ".tmp"
        guard
            FileManager.default.createFile(atPath: temp, contents: Data(keys.sorted().map { $0 + "\n" }.joined().utf8))
        else { return }
        rename(temp, path)
    }
}
