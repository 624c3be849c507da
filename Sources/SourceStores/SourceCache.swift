import Cache
import Foundation
import Glibc
import Hashing
import Synchronization
import Syscalls

/// Downloaded sources on disk: one body file per source version and a small record of
/// what the origin said of it (ETag, Last-Modified, length). Bodies are written to a
/// temporary file, fsynced and renamed into place, so a partial download is never used;
/// the least recently used go past `maxBytes` (`DiskLRU` keeps the books, as it does for
/// the result store); the index is filled from the records in the background at start, and
/// until it is, a source it lacks is read from its record on disk. When a source was last checked with the origin is kept in memory only, so after
/// a restart every source is checked once before it is used.
final class SourceCache: Sendable {
    /// What the origin said of one source.
    struct Record: Codable, Sendable, Equatable {
        var src: String
        var etag: String
        var lastModified: String
        var bytes: Int64
        /// The body's SHA-256 when the origin gave neither ETag nor Last-Modified, or when
        /// it sent other bytes under an ETag already held.
        var digest: String

        /// The source's version in cache keys: its ETag (with the digest of its bytes when
        /// they changed under it), else Last-Modified and length, else its contents' digest.
        var version: String {
            if !etag.isEmpty { return digest.isEmpty ? "etag:\(etag)" : "etag:\(etag):sha256:\(digest)" }
            if !lastModified.isEmpty { return "last-modified:\(lastModified):\(bytes)" }
            return "sha256:\(digest)"
        }
    }

    /// What the index holds of a source, besides its size.
    struct Kept: Sendable {
        var record: Record
        /// Monotonic nanoseconds of the last check with the origin; 0: never (since start).
        var checkedAt: UInt64
    }

    let dir: String
    /// By the SHA-256 of `src`.
    private let index: DiskLRU<Kept>
    /// While the index is being filled from the folder.
    private let filling = Atomic<Bool>(false)
    private let counter = Atomic<UInt64>(0)
    /// Why sources cannot be kept (the folder cannot be written), or nil.
    let problem: String?

    init(dir: String, maxBytes: Int64) {
        self.dir = dir
        index = DiskLRU(maxBytes: maxBytes, blockSize: DiskLRU<Kept>.blockSize(of: dir))
        var problem: String?
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        } catch {
            problem = "the source cache folder \(dir) cannot be created: \(error.localizedDescription)"
        }
        self.problem = problem
        guard problem == nil else { return }
        filling.store(true, ordering: .releasing)
        // Taken now, not on the thread: a download begun before the thread runs is ours.
        let began = Int64(time(nil)) - 1
        let thread = Thread { [self] in rebuild(began: began) }
        thread.name = "aspect-source-cache-fill"
        thread.start()
    }

    /// Whether the index is still being filled from the folder.
    var isFilling: Bool { filling.load(ordering: .acquiring) }

    private func key(_ src: String) -> Digest? { Digest(hex: Self.stem(src)) }

    /// The file name stem of a source: the SHA-256 of its `src`.
    static func stem(_ src: String) -> String { SHA256.hex(src) }

    /// Where a version's body lives: a new version is a new file, so a render that opened
    /// the old one reads it whole, and opening a version by name never gives another.
    func bodyPath(_ record: Record) -> String {
        "\(dir)/\(Self.stem(record.src)).\(String(SHA256.hex(record.version).prefix(16))).src"
    }

    private func recordPath(_ src: String) -> String { "\(dir)/\(Self.stem(src)).json" }

    /// The record of `src` and when it was last checked, marked as used.
    func entry(_ src: String) -> (record: Record, checkedAt: UInt64)? {
        guard let key = key(src) else { return nil }
        let fillRunning = isFilling
        if let e = index.use(key) { return (e.meta.record, e.meta.checkedAt) }
        guard fillRunning, let (record, _) = readRecord(recordPath(src)), record.src == src else { return nil }
        _ = index.insert(key, Kept(record: record, checkedAt: 0), size: record.bytes)
        return (record, 0)
    }

    /// The origin said the kept version is current (a 304).
    func confirmed(_ src: String, at now: UInt64) {
        guard let key = key(src) else { return }
        index.update(key) { $0.checkedAt = now }
    }

    /// A new file for a download, in the cache's folder (so the rename is atomic).
    func temporaryFile() -> (path: String, fd: Int32)? {
        let path = "\(dir)/.tmp-\(getpid())-\(counter.add(1, ordering: .relaxed).newValue)"
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        return fd >= 0 ? (path, fd) : nil
    }

    /// Puts a whole, fsynced download in place under its version's name, then its record,
    /// and evicts what no longer fits (never the one just kept). False when it cannot.
    func keep(_ record: Record, body temp: String, at now: UInt64) -> Bool {
        let body = bodyPath(record)
        guard rename(temp, body) == 0 else { return false }
        let recordTemp = "\(dir)/.tmp-\(getpid())-\(counter.add(1, ordering: .relaxed).newValue)"
        guard let data = try? JSONEncoder().encode(record),
            AtomicFile.write(recordPath(record.src), Array(data), temporary: recordTemp)
        else {
            unlink(body)
            return false
        }
        guard let key = key(record.src) else { return false }
        let (replaced, evicted) = index.insert(key, Kept(record: record, checkedAt: now), size: record.bytes)
        if let old = replaced?.meta.record, bodyPath(old) != body { unlink(bodyPath(old)) }
        removeFiles(evicted)
        return true
    }

    /// Forgets a source the origin no longer has.
    func remove(_ src: String) {
        guard let key = key(src), let old = index.remove(key)?.meta.record else { return }
        unlink(recordPath(src))
        unlink(bodyPath(old))
    }

    var figures: (bytes: Int64, entries: Int) {
        let f = index.figures
        return (f.bytes, f.entries)
    }

    private func removeFiles(_ entries: [(Digest, DiskLRU<Kept>.Entry)]) {
        for (_, e) in entries {
            unlink(bodyPath(e.meta.record))
            unlink(recordPath(e.meta.record.src))
        }
    }

    /// A record and its body's mtime, when the body is whole.
    private func readRecord(_ path: String) -> (Record, Int64)? {
        guard let data = FileManager.default.contents(atPath: path),
            let record = try? JSONDecoder().decode(Record.self, from: data)
        else { return nil }
        var st = stat()
        guard stat(bodyPath(record), &st) == 0, Int64(st.st_size) == record.bytes else { return nil }
        return (record, Int64(st.st_mtim.tv_sec))
    }

    /// The index from the records whose bodies are whole, in the background; temporary
    /// files, records without a whole body and bodies without a record go; then what is
    /// over the cap (lowered since), the least recently written first.
    private func rebuild(began: Int64) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        var bodies = Set<String>()
        var found: [(Record, Int64)] = []
        for name in names {
            let path = "\(dir)/\(name)"
            if name.hasPrefix(".tmp-") {
                // A download under way since the fill began is not an earlier one's leftover.
                var st = stat()
                if stat(path, &st) == 0, Int64(st.st_mtim.tv_sec) < began { unlink(path) }
            } else if name.hasSuffix(".json") {
                guard let (record, mtime) = readRecord(path) else {
                    unlink(path)
                    continue
                }
                bodies.insert(bodyPath(record))
                found.append((record, mtime))
            }
        }
        for name in names where name.hasSuffix(".src") && !bodies.contains("\(dir)/\(name)") {
            // A body put in place since the fill began has its record written after it.
            var st = stat()
            guard stat("\(dir)/\(name)", &st) == 0, Int64(st.st_mtim.tv_sec) < began else { continue }
            unlink("\(dir)/\(name)")
        }
        index.reserve(index.figures.entries + found.count)
        index.addOlder(
            found.sorted { $0.1 > $1.1 }.compactMap { r in
                key(r.0.src).map { ($0, Kept(record: r.0, checkedAt: 0), r.0.bytes) }
            })
        filling.store(false, ordering: .releasing)
        while case let doomed = index.trim(most: 256), !doomed.isEmpty { removeFiles(doomed) }
    }
}
