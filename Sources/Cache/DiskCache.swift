import Core
import Foundation
import Glibc
import Stores
import Synchronization
import Syscalls

/// Results on disk under `dir`, named by their key, kept under `maxBytes` of disk by
/// evicting the least recently used (`DiskLRU` keeps the books). An entry is written to a
/// temporary file in its folder, fsynced and renamed into place, so a crash never leaves a
/// partial entry under a real name. The index lives in memory and is filled from the
/// folder in the background at start (`DiskCache+Fill`): the cache serves from its first
/// second, and until the fill is done a key the index lacks is looked for on disk. One
/// process per folder.
public final class DiskCache: Sendable {
    public struct Hit: Sendable {
        let dir: String
        let hex: String
        public var format: String

        /// The entry's file (built when asked for: a hit served from an open file needs no path).
        public var path: String { DiskCache.path(dir, hex, format) }
    }

    public let dir: String
    public let maxBytes: Int64
    /// How often a folder that cannot be used is tried again, in nanoseconds.
    public let recheckInterval: UInt64
    /// By key; an entry's `Meta` is its kind (`Kinds`).
    let index: DiskLRU<UInt16>
    /// Read on every hit, so an atomic rather than the health's lock.
    private let enabled = Atomic<Bool>(false)
    /// While the index is being filled from the folder.
    let filling = Atomic<Bool>(false)
    /// While the folder is trimmed to the cap after the fill (files still being removed).
    let trimming = Atomic<Bool>(false)
    /// When the fill was started: temporary files older than this are an earlier process's.
    let fillBegan = Mutex(timespec())
    /// Keys removed while the fill ran, which it must not put back.
    let removedWhileFilling = Mutex(Set<Digest>())
    private let health = Mutex(Health())
    private let tempCounter = Atomic<UInt64>(0)
    /// Told the keys (hex) whose files were removed or replaced, after the fact.
    let onRemove: @Sendable ([String]) -> Void

    struct Health {
        /// Why the cache cannot be used (not writable, …), or nil when it can.
        var problem: String?
        var nextCheck: UInt64 = 0
    }

    /// Whether the fill runs on its own thread; tests run it by hand (`fill()`) to see the
    /// cache while it is not done.
    let fillsInBackground: Bool

    public convenience init(
        dir: String, maxBytes: Int64, recheckMs: Int = Defaults.Cache.recheckMs,
        onRemove: @escaping @Sendable ([String]) -> Void = { _ in }
    ) {
        self.init(dir: dir, maxBytes: maxBytes, recheckMs: recheckMs, fillsInBackground: true, onRemove: onRemove)
    }

    init(
        dir: String, maxBytes: Int64, recheckMs: Int, fillsInBackground: Bool,
        onRemove: @escaping @Sendable ([String]) -> Void
    ) {
        self.fillsInBackground = fillsInBackground
        self.dir = dir
        self.maxBytes = maxBytes
        index = DiskLRU(maxBytes: maxBytes, blockSize: DiskLRU<UInt16>.blockSize(of: dir))
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

    /// Whether the index is still being filled from the folder.
    public var isFilling: Bool { filling.load(ordering: .acquiring) }

    /// Whether the folder is still being trimmed to the cap after the fill.
    public var isTrimming: Bool { trimming.load(ordering: .acquiring) }

    /// A folder that could not be used (full, not writable, missing) is tried again once
    /// `recheckInterval` has passed since the last try: when it works, the cache resumes,
    /// and its index is filled from what the folder holds. Called on misses, off the event
    /// loop (the probe writes and fsyncs a file).
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
        if problem == nil { startFill() }
        health.withLock { $0.problem = problem }
        enabled.store(problem == nil, ordering: .releasing)
    }

    /// The entry for `key`, marked as used now; nil on a miss.
    public func lookup(_ hex: String) -> Hit? {
        guard isEnabled, let key = Digest(hex: hex) else { return nil }
        // Read before the index: once the fill is seen done, the index holds the folder.
        let fillRunning = isFilling
        if let e = index.use(key), let kind = Kinds.name(e.meta) { return Hit(dir: dir, hex: hex, format: kind) }
        guard fillRunning, let (kind, size) = onDisk(hex), let code = Kinds.code(kind) else { return nil }
        admit(key, code, size: size)
        return Hit(dir: dir, hex: hex, format: kind)
    }

    /// Whether the cache holds `hex` (not marked as used).
    public func contains(_ hex: String) -> Bool { Digest(hex: hex).map(index.contains) ?? false }

    /// Removes an entry and its file; whether there was one. While the fill runs, a key
    /// not yet in the index is looked for on disk.
    @discardableResult
    public func remove(_ hex: String) -> Bool {
        guard let key = Digest(hex: hex) else { return false }
        let fillRunning = isFilling
        if fillRunning { removedWhileFilling.withLock { _ = $0.insert(key) } }
        let kind: String?
        if let e = index.remove(key) {
            kind = Kinds.name(e.meta)
        } else if fillRunning, let found = onDisk(hex) {
            kind = found.kind
        } else {
            return false
        }
        if let kind { unlink(path(hex, kind)) }
        onRemove([hex])
        return true
    }

    /// Forgets an entry whose file has gone (removed by hand, say).
    public func forget(_ hex: String) {
        guard let key = Digest(hex: hex) else { return }
        index.remove(key)
        onRemove([hex])
    }

    /// Writes an entry whole (temporary file, fsync, rename) and evicts what no longer
    /// fits. False, with nothing left behind, when it cannot be written.
    @discardableResult
    public func store(_ hex: String, _ bytes: [UInt8], format: String) -> Bool {
        recheck()
        guard isEnabled, let key = Digest(hex: hex), let code = Kinds.code(format) else { return false }
        let shard = "\(dir)/\(hex.prefix(2))"
        mkdir(shard, 0o755)
        let temp = "\(shard)/.tmp-\(hex)-\(getpid())-\(tempCounter.add(1, ordering: .relaxed).newValue)"
        guard AtomicFile.write(path(hex, format), bytes, temporary: temp) else { return false }
        admit(key, code, size: Int64(bytes.count))
        return true
    }

    /// Puts an entry in the index as the most recently used; removes the files of the one
    /// it replaced (another kind under the same key) and of those evicted.
    private func admit(_ key: Digest, _ code: UInt16, size: Int64) {
        let hex = key.hex
        let (replaced, evicted) = index.insert(key, code, size: size)
        // The same key in another format (a kind renamed) leaves its old file behind.
        if let replaced, replaced.meta != code, let old = Kinds.name(replaced.meta) { unlink(path(hex, old)) }
        removeFiles(evicted)
        onRemove([hex] + evicted.map(\.0.hex))
    }

    func removeFiles(_ entries: [(Digest, DiskLRU<UInt16>.Entry)]) {
        for (key, e) in entries {
            if let kind = Kinds.name(e.meta) { unlink(path(key.hex, kind)) }
        }
    }

    /// Bytes held (whole blocks), entries, evictions so far.
    public var figures: (bytes: Int64, entries: Int, evictions: Int) { index.figures }

    func path(_ hex: String, _ format: String) -> String { DiskCache.path(dir, hex, format) }

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
}

/// A result's kind in two bytes, as the index keeps it: the format (0 for an `/info`
/// answer, else 1 + its place in `ImageFormat.allCases`) times 128, plus the quality the
/// encoder chose (0 for none); 4096 more when `format=best` chose it, 8192 more again for
/// WebP's lossless mode.
enum Kinds {
    static let best: UInt16 = 4096
    static let lossless: UInt16 = 8192

    static func code(_ kind: String) -> UInt16? {
        if kind == ResultKind.info { return 0 }
        guard let (format, quality, chosen) = ResultKind.parts(kind),
            let place = ImageFormat.allCases.firstIndex(of: format)
        else { return nil }
        let flags: UInt16 = chosen == nil ? 0 : chosen?.lossless == true && format == .webp ? best + lossless : best
        return flags + UInt16(place + 1) * 128 + UInt16(quality ?? 0)
    }

    static func name(_ code: UInt16) -> String? {
        let flags = code / best
        let place = Int(code % best / 128)
        let quality = Int(code % 128)
        if place == 0 { return quality == 0 && flags == 0 ? ResultKind.info : nil }
        guard place <= ImageFormat.allCases.count, flags <= 3, flags != 2 else { return nil }
        let format = ImageFormat.allCases[place - 1]
        let chosen = flags == 0 ? nil : BestChoice(format: format, lossless: format == .png || flags == 3)
        return ResultKind.image(format, quality: quality == 0 || quality > 100 ? nil : quality, chosen: chosen)
    }
}
