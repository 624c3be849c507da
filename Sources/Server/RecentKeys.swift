import Cache
import HTTP
import Synchronization

/// Request targets seen lately and what they resolved to. A hit here still checks the
/// source's identity with stat(2), so an edited source is never served stale; it only
/// saves parsing, the canonical form and the hash for a URL already seen.
final class RecentKeys: Sendable {
    struct Known: Sendable {
        var src: String
        var path: String
        var identity: CacheKey.SourceIdentity
        var key: CacheKey
        var headers: HTTPHeaders
    }

    /// Past this many, the memo starts over: a bound, not an LRU.
    static let capacity = 2_000
    private let known = Mutex<[String: Known]>([:])

    func get(_ target: String) -> Known? { known.withLock { $0[target] } }

    func set(_ target: String, _ value: Known) {
        known.withLock { map in
            if map.count >= RecentKeys.capacity { map.removeAll(keepingCapacity: true) }
            map[target] = value
        }
    }
}
