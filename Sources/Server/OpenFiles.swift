import HTTP
import Synchronization

/// Cached results held open for hits, by key: a hit then costs neither open(2) nor
/// close(2), and one descriptor serves every response for that key at once (sendfile
/// reads from an explicit offset). The disk cache says when a key's file goes, and its
/// descriptor is dropped then; a response still sending keeps its own reference.
final class OpenFiles: Sendable {
    let capacity: Int
    private let files = Mutex<[String: OpenFile]>([:])

    init(capacity: Int) { self.capacity = capacity }

    /// The open file for `hex`, opened from `path` on first use; nil when it cannot be opened.
    func file(_ hex: String, path: String) -> OpenFile? {
        if capacity == 0 { return OpenFile.open(path) }
        if let f = files.withLock({ $0[hex] }) { return f }
        guard let f = OpenFile.open(path) else { return nil }
        files.withLock { map in
            // Full: one goes to make room. Which one matters little; the hot ones come back.
            if map.count >= capacity, let any = map.keys.first { map[any] = nil }
            map[hex] = f
        }
        return f
    }

    func remove(_ hexes: [String]) {
        guard capacity > 0 else { return }
        files.withLock { map in for h in hexes { map[h] = nil } }
    }
}
