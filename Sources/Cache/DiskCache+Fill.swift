import Core
import Foundation
import Glibc
import Stores

/// The index filled from the folder in the background, as nginx's cache loader does: the
/// cache serves meanwhile, looking on disk for a key it has not indexed yet (`onDisk`),
/// and a folder over its cap is trimmed once the fill is done, 128 entries at a time,
/// paced. The folder's layout (`XX/KEY.KIND`, `by-source/`) is the one every earlier version
/// wrote, so a folder kept across an upgrade goes on being served.
extension DiskCache {
    struct Found {
        var key: Digest
        var code: UInt16
        var size: Int64
        var mtime: Int64
    }

    /// How many found entries go into the index under one hold of its lock.
    static var fillBatch: Int { 4096 }
    /// How many entries the trim after the fill evicts at a time, and the pause between:
    /// about 12,000 files a second at most.
    static var trimBatch: Int { 128 }
    static var trimPauseMicroseconds: UInt32 { 10_000 }

    func startFill() {
        // Before any write of this process can start (the cache is enabled after this):
        // a temporary file older than this is an earlier process's. The coarse clock is
        // the one file times are stamped from.
        var now = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &now)
        fillBegan.withLock { $0 = now }
        filling.store(true, ordering: .releasing)
        guard fillsInBackground else { return }
        let thread = Thread { [self] in fill() }
        thread.name = "aspect-cache-fill"
        thread.start()
    }

    /// Walks the folder (removing earlier processes' temporary files), puts what it found in the index, the
    /// most recently written as the most recently used, then trims to the cap.
    func fill() {
        // Temporary files from before are removed; this process's own, being written now, are not.
        let began = fillBegan.withLock { $0 }
        func isStale(_ path: String) -> Bool {
            var st = stat()
            guard lstat(path, &st) == 0 else { return false }
            return (st.st_mtim.tv_sec, st.st_mtim.tv_nsec) < (began.tv_sec, began.tv_nsec)
        }
        var found = FoundList()
        for shard in Self.names(in: dir) {
            let shardPath = "\(dir)/\(shard)"
            if shard.hasPrefix(".tmp-") {
                if isStale(shardPath) { unlink(shardPath) }
                continue
            }
            guard shard.utf8.count == 2 else { continue }
            for name in Self.names(in: shardPath) {
                let file = "\(shardPath)/\(name)"
                if name.hasPrefix(".tmp-") {
                    if isStale(file) { unlink(file) }
                    continue
                }
                guard let dot = name.firstIndex(of: "."), name[..<dot].hasPrefix(shard),
                    let key = Digest(hex: name[..<dot]), let code = Kinds.code(String(name[name.index(after: dot)...]))
                else { continue }
                var st = stat()
                guard lstat(file, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
                let mtime = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
                guard found.append(Found(key: key, code: code, size: Int64(st.st_size), mtime: mtime)) else { break }
            }
        }
        // The most recently written first.
        found.sort { $0.mtime > $1.mtime }
        index.reserve(index.figures.entries + found.count)
        found.withRecords { records in
            var start = 0
            while start < records.count {
                let end = min(records.count, start + Self.fillBatch)
                let removed = removedWhileFilling.withLock { $0 }
                index.addOlder(
                    records[start..<end].lazy.filter { !removed.contains($0.key) }.map { ($0.key, $0.code, $0.size) })
                start = end
            }
        }
        _ = consume found
        trimming.store(true, ordering: .releasing)
        filling.store(false, ordering: .releasing)
        removedWhileFilling.withLock { $0.removeAll() }
        while true {
            let doomed = index.trim(most: Self.trimBatch)
            if doomed.isEmpty { break }
            removeFiles(doomed)
            onRemove(doomed.map(\.0.hex))
            // Paced: a burst of unlinks fills the file system's journal, and a miss's fsync
            // then waits on it (at 1M results, unpaced, misses reached 7× their median).
            usleep(Self.trimPauseMicroseconds)
        }
        trimming.store(false, ordering: .releasing)
    }

    /// A result's file found on disk by its key, while the index is filling: the plain
    /// kinds by name first, then the shard's listing (for a kind with a quality); its kind
    /// and size.
    func onDisk(_ hex: String) -> (kind: String, size: Int64)? {
        var st = stat()
        for kind in [ResultKind.info] + ImageFormat.allCases.map(\.rawValue) {
            if lstat(path(hex, kind), &st) == 0, (st.st_mode & S_IFMT) == S_IFREG { return (kind, Int64(st.st_size)) }
        }
        let shard = "\(dir)/\(hex.prefix(2))"
        for name in Self.names(in: shard) where name.hasPrefix(hex + ".") {
            let kind = String(name.dropFirst(hex.utf8.count + 1))
            guard ResultKind.isKnown(kind), lstat("\(shard)/\(name)", &st) == 0, (st.st_mode & S_IFMT) == S_IFREG
            else { continue }
            return (kind, Int64(st.st_size))
        }
        return nil
    }

    /// The names in a folder (none when it cannot be read).
    static func names(in dir: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
    }
}
