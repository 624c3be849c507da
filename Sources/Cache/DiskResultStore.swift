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
    private let bySource: SourceIndex

    /// `openFiles` results held open for hits; those up to `memoryFileBytes` in memory too.
    public init(dir: String, maxBytes: Int64, recheckMs: Int, openFiles: Int, memoryFileBytes: Int) {
        let held = OpenFiles(capacity: openFiles, keepBytes: memoryFileBytes)
        self.openFiles = held
        cache = DiskCache(dir: dir, maxBytes: maxBytes, recheckMs: recheckMs) { held.remove($0) }
        bySource = SourceIndex(dir: dir + "/by-source")
    }

    public func result(_ key: String) -> StoredResult? {
        guard let hit = cache.lookup(key) else { return nil }
        guard let file = openFiles.file(key, path: hit.path) else {
            cache.forget(key)
            return nil
        }
        return StoredResult(kind: hit.format, size: hit.size, body: file)
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
}

/// Which keys were kept for which source, on disk beside the cache (`by-source/`): a file
/// per source, named by the SHA-256 of `src`, one key a line, appended on each keep (a
/// write of one line is atomic with O_APPEND), taken whole by a purge. An evicted key
/// stays listed until then: removing it again is a no-op that is not counted.
final class SourceIndex: Sendable {
    let dir: String
    private let lock = Mutex<Void>(())

    init(dir: String) {
        self.dir = dir
        mkdir(dir, 0o755)
    }

    func file(_ source: String) -> String { "\(dir)/\(SHA256.hex(source))" }

    func add(_ key: String, source: String) {
        let line = Array((key + "\n").utf8)
        lock.withLock { _ in
            let fd = open(file(source), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard fd >= 0 else { return }
            _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
    }

    /// The keys listed for `source`, each once, and the list gone.
    func take(_ source: String) -> [String] {
        lock.withLock { _ in
            let path = file(source)
            guard let data = FileManager.default.contents(atPath: path) else { return [] }
            unlink(path)
            var seen = Set<String>()
            return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init).filter {
                $0.count == 64 && seen.insert($0).inserted
            }
        }
    }
}
