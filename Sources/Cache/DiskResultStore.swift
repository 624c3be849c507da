import Stores
import Syscalls

/// The disk cache as the service's result store: hands back each hit open, from the files
/// it holds open for hits (`cache.openFiles`, the small ones in memory too), and forgets
/// an entry whose file has gone.
public final class DiskResultStore: ResultStore {
    public let cache: DiskCache
    private let openFiles: OpenFiles

    /// `openFiles` results held open for hits; those up to `memoryFileBytes` in memory too.
    public init(dir: String, maxBytes: Int64, recheckMs: Int, openFiles: Int, memoryFileBytes: Int) {
        let held = OpenFiles(capacity: openFiles, keepBytes: memoryFileBytes)
        self.openFiles = held
        cache = DiskCache(dir: dir, maxBytes: maxBytes, recheckMs: recheckMs) { held.remove($0) }
    }

    public func result(_ key: String) -> StoredResult? {
        guard let hit = cache.lookup(key) else { return nil }
        guard let file = openFiles.file(key, path: hit.path) else {
            cache.forget(key)
            return nil
        }
        return StoredResult(kind: hit.format, size: hit.size, body: file)
    }

    public func keep(_ key: String, _ bytes: [UInt8], kind: String) -> Bool { cache.store(key, bytes, format: kind) }
    public var problem: String? { cache.problem }
    public var figures: (bytes: Int64, entries: Int, evictions: Int) { cache.figures }
}
