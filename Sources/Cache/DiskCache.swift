import Core
import Foundation
import Glibc
import Stores
import Synchronization
import Syscalls

/// Results on disk under `dir`, named by their key, kept under `maxBytes` by evicting the
/// least recently used (`DiskLRU` keeps the books). An entry is written to a temporary
/// file in its folder, fsynced and renamed into place, so a crash never leaves a partial
/// entry under a real name. The index lives in memory and is rebuilt from the folder on
/// start, so entries survive a restart; stray temporary files are removed then. One
/// process per folder.
public final class DiskCache: Sendable {
    public struct Hit: Sendable {
        let dir: String
        let hex: String
        public var format: String
        public var size: Int64

        /// The entry's file (built when asked for: a hit served from an open file needs no path).
        public var path: String { DiskCache.path(dir, hex, format) }
    }

    public let dir: String
    public let maxBytes: Int64
    /// How often a folder that cannot be used is tried again, in nanoseconds.
    public let recheckInterval: UInt64
    /// By key; an entry's `Meta` is its format.
    private let index: DiskLRU<String>
    /// Read on every hit, so an atomic rather than the health's lock.
    private let enabled = Atomic<Bool>(false)
    private let health = Mutex(Health())
    private let tempCounter = Atomic<UInt64>(0)
    /// Told the keys (hex) whose files were removed or replaced, after the fact.
    private let onRemove: @Sendable ([String]) -> Void

    struct Health {
        /// Why the cache cannot be used (not writable, …), or nil when it can.
        var problem: String?
        var nextCheck: UInt64 = 0
    }

    public init(
        dir: String, maxBytes: Int64, recheckMs: Int = Defaults.Cache.recheckMs,
        onRemove: @escaping @Sendable ([String]) -> Void = { _ in }
    ) {
        self.dir = dir
        self.maxBytes = maxBytes
        index = DiskLRU(maxBytes: maxBytes, blockSize: DiskLRU<String>.blockSize(of: dir))
        self.onRemove = onRemove
        recheckInterval = UInt64(max(0, recheckMs)) * 1_000_000
        if maxBytes == 0 {
            health.withLock { $0.problem = "cache.maxBytes is 0: the cache is off" }
            return
        }
        recheck(force: true)
    }

    /// Why the cache cannot be used now, or nil when it can.
    public var problem: String? { health.withLock { $0.problem } }

    public var isEnabled: Bool { enabled.load(ordering: .acquiring) }

    /// A folder that could not be used (full, not writable, missing) is tried again once
    /// `recheckInterval` has passed since the last try: when it works, the cache resumes,
    /// with an index of what the folder holds. Called on misses, off the event loop (the
    /// probe writes and fsyncs a file).
    public func recheck(force: Bool = false) {
        guard maxBytes > 0, !isEnabled else { return }
        let now = Clock.now()
        let due = health.withLock { h -> Bool in
            guard force || now >= h.nextCheck else { return false }
            h.nextCheck = now + recheckInterval
            return true
        }
        guard due else { return }
        let problem = DiskCache.prepare(dir)
        if problem == nil { rebuildIndex() }
        health.withLock { $0.problem = problem }
        enabled.store(problem == nil, ordering: .releasing)
    }

    /// The entry for `key`, marked as used now; nil on a miss.
    public func lookup(_ hex: String) -> Hit? {
        guard isEnabled, let e = index.use(hex) else { return nil }
        return Hit(dir: dir, hex: hex, format: e.meta, size: e.size)
    }

    /// Whether the cache holds `hex` (not marked as used).
    public func contains(_ hex: String) -> Bool { index.contains(hex) }

    /// Removes an entry and its file; whether there was one.
    @discardableResult
    public func remove(_ hex: String) -> Bool {
        guard let e = index.remove(hex) else { return false }
        unlink(path(hex, e.meta))
        onRemove([hex])
        return true
    }

    /// Forgets an entry whose file has gone (removed by hand, say).
    public func forget(_ hex: String) {
        index.remove(hex)
        onRemove([hex])
    }

    /// Writes an entry whole (temporary file, fsync, rename) and evicts what no longer
    /// fits. False, with nothing left behind, when it cannot be written.
    @discardableResult
    public func store(_ hex: String, _ bytes: [UInt8], format: String) -> Bool {
        recheck()
        guard isEnabled else { return false }
        let shard = "\(dir)/\(hex.prefix(2))"
        mkdir(shard, 0o755)
        let temp = "\(shard)/.tmp-\(hex)-\(getpid())-\(tempCounter.add(1, ordering: .relaxed).newValue)"
        guard AtomicFile.write(path(hex, format), bytes, temporary: temp) else { return false }
        let (replaced, evicted) = index.insert(hex, format, size: Int64(bytes.count))
        // The same key in another format (a kind renamed) leaves its old file behind.
        if let replaced, replaced.meta != format { unlink(path(hex, replaced.meta)) }
        for (hex, e) in evicted { unlink(path(hex, e.meta)) }
        onRemove([hex] + evicted.map(\.0))
        return true
    }

    /// Bytes held, entries, evictions so far.
    public var figures: (bytes: Int64, entries: Int, evictions: Int) { index.figures }

    private func path(_ hex: String, _ format: String) -> String { DiskCache.path(dir, hex, format) }

    static func path(_ dir: String, _ hex: String, _ format: String) -> String {
        "\(dir)/\(hex.prefix(2))/\(hex).\(format)"
    }

    /// Creates the folder and proves it writable; the problem, if any.
    private static func prepare(_ dir: String) -> String? {
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        } catch {
            return "cache.dir \(dir) cannot be created: \(error.localizedDescription)"
        }
        let probe = "\(dir)/.tmp-probe-\(getpid())"
        defer { unlink(probe) }
        guard AtomicFile.writeDurably(probe, Array("probe".utf8)) else {
            return "cache.dir \(dir) is not writable: \(String(cString: strerror(errno)))"
        }
        return nil
    }

    /// Rebuilds the index from the folder, oldest file first (the least recently used
    /// after a restart is the least recently written), and removes temporary files.
    private func rebuildIndex() {
        var found: [(key: String, meta: String, size: Int64, mtime: Int64)] = []
        let fm = FileManager.default
        for shard in (try? fm.contentsOfDirectory(atPath: dir)) ?? [] {
            let shardPath = "\(dir)/\(shard)"
            if shard.hasPrefix(".tmp-") {
                unlink(shardPath)
                continue
            }
            guard shard.count == 2 else { continue }
            for name in (try? fm.contentsOfDirectory(atPath: shardPath)) ?? [] {
                let file = "\(shardPath)/\(name)"
                if name.hasPrefix(".tmp-") {
                    unlink(file)
                    continue
                }
                let parts = name.split(separator: ".")
                guard parts.count == 2, parts[0].count == 64, parts[0].hasPrefix(shard),
                    case let format = String(parts[1]), ResultKind.isKnown(format)
                else { continue }
                var st = stat()
                guard stat(file, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
                let mtime = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
                found.append((String(parts[0]), format, Int64(st.st_size), mtime))
            }
        }
        let evicted = index.rebuild(found.sorted { $0.mtime < $1.mtime }.map { ($0.key, $0.meta, $0.size) })
        for (hex, e) in evicted { unlink(path(hex, e.meta)) }
    }
}
