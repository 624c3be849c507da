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
        let index = SourceIndex(dir: dir + "/by-source")
        bySource = index
        cache = DiskCache(dir: dir, maxBytes: maxBytes, recheckMs: recheckMs) {
            held.remove($0)
            index.removed($0)
        }
        // A cache that cannot be read now keeps its lists as they are.
        index.load { [cache] in !cache.isEnabled || cache.contains($0) }
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

/// Which keys are kept for which source, on disk beside the cache (`by-source/`): a file
/// per source, named by the SHA-256 of `src`, one key a line. A keep appends a line; an
/// eviction rewrites the source's file without the keys that went (or removes it); a purge
/// takes it whole. The same map is held in memory, read back from the files at start-up
/// (keys the cache no longer has are dropped then), so it stays as small as the cache's
/// own index: about 65 bytes a result.
final class SourceIndex: Sendable {
    let dir: String
    private struct State {
        var keys: [String: Set<String>] = [:]
        var sourceOf: [String: String] = [:]
    }
    private let state = Mutex(State())

    init(dir: String) {
        self.dir = dir
    }

    /// Reads the files back, keeping the keys `isKept` says the cache still holds.
    func load(isKept: (String) -> Bool) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        state.withLock { s in
            for name in names where name.count == 64 {
                let path = "\(dir)/\(name)"
                let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
                let keys = Set(text.split(separator: "\n").map(String.init).filter { $0.count == 64 && isKept($0) })
                if keys.isEmpty {
                    unlink(path)
                    continue
                }
                s.keys[name] = keys
                for k in keys { s.sourceOf[k] = name }
                write(path, keys)
            }
        }
    }

    func name(_ source: String) -> String { SHA256.hex(source) }

    func add(_ key: String, source: String) {
        let n = name(source)
        state.withLock { s in
            guard s.keys[n, default: []].insert(key).inserted else { return }
            s.sourceOf[key] = n
            // Made here, not at start-up: the cache's folder may come later (cache.recheckMs).
            mkdir(dir, 0o755)
            let fd = open("\(dir)/\(n)", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard fd >= 0 else { return }
            let line = Array((key + "\n").utf8)
            _ = line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
    }

    /// Keys the cache removed (evicted, or gone): their sources' files rewritten without them.
    func removed(_ keys: [String]) {
        state.withLock { s in
            var touched = Set<String>()
            for k in keys {
                guard let n = s.sourceOf.removeValue(forKey: k) else { continue }
                s.keys[n]?.remove(k)
                touched.insert(n)
            }
            for n in touched {
                let path = "\(dir)/\(n)"
                if let left = s.keys[n], !left.isEmpty {
                    write(path, left)
                } else {
                    s.keys[n] = nil
                    unlink(path)
                }
            }
        }
    }

    /// The keys listed for `source`, and the list gone.
    func take(_ source: String) -> [String] {
        let n = name(source)
        return state.withLock { s in
            unlink("\(dir)/\(n)")
            let keys = s.keys.removeValue(forKey: n) ?? []
            for k in keys { s.sourceOf[k] = nil }
            return Array(keys)
        }
    }

    /// A source's file, whole or not at all.
    private func write(_ path: String, _ keys: Set<String>) {
        let temp = path + ".tmp"
        guard
            FileManager.default.createFile(atPath: temp, contents: Data(keys.sorted().map { $0 + "\n" }.joined().utf8))
        else { return }
        rename(temp, path)
    }
}
