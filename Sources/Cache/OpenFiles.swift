import Synchronization
import Syscalls

/// Cached results held open for hits, by key: a hit then costs neither open(2) nor
/// close(2), and one descriptor serves every response for that key at once (sendfile
/// reads from an explicit offset). The disk cache says when a key's file goes, and its
/// descriptor is dropped then; a response still sending keeps its own reference.
final class OpenFiles: Sendable {
    let capacity: Int
    /// Files up to this size are also held in memory (`cache.memoryFileBytes`).
    let keepBytes: Int
    private let files = Mutex<Table>(Table())

    struct Table {
        var byKey: [String: (file: OpenFile, size: Int64)] = [:]
        /// Counts removals, so a file opened while its entry was being evicted is not kept.
        var removals: UInt64 = 0
    }

    init(capacity: Int, keepBytes: Int = 0) {
        self.capacity = capacity
        self.keepBytes = keepBytes
    }

    /// The file and its size as it was opened.
    private func open(_ path: String) -> (file: OpenFile, size: Int64)? { OpenFile.open(path, keepingUpTo: keepBytes) }

    /// The open file for `hex` and its size, opened from `path` on first use; nil when it
    /// cannot be opened.
    func file(_ hex: String, path: @autoclosure () -> String) -> (file: OpenFile, size: Int64)? {
        if capacity == 0 { return open(path()) }
        let (held, removals) = files.withLock { ($0.byKey[hex], $0.removals) }
        if let held { return held }
        guard let f = open(path()) else { return nil }
        files.withLock { t in
            // An eviction meanwhile may have unlinked this very file: serve it this once
            // (its bytes are whole), but do not keep it.
            guard t.removals == removals else { return }
            // Full: one goes to make room. Which one matters little; the hot ones come back.
            if t.byKey.count >= capacity, let any = t.byKey.keys.first { t.byKey[any] = nil }
            t.byKey[hex] = f
        }
        return f
    }

    func remove(_ hexes: [String]) {
        guard capacity > 0 else { return }
        files.withLock { t in
            t.removals += 1
            for h in hexes { t.byKey[h] = nil }
        }
    }
}
