import HTTP
import Stores
import Synchronization

/// Request targets seen lately and what they resolved to. A hit here still checks the
/// source's identity (a stat(2), or the source cache's freshness), so an edited source is never served stale; it only
/// saves parsing, the canonical form and the hash for a URL already seen.
final class RecentKeys: Sendable {
    /// What a request's key follows from before it is parsed: its query as sent, and
    /// whether the client takes WebP (for `format=auto`).
    struct Target: Hashable, Sendable {
        var query: String
        /// What `format=auto` would choose by: `AcceptHeader.autoTag`.
        var autoTag: String
    }

    struct Entry: Sendable {
        var identity: SourceIdentity
        var key: CacheKey
        var headers: AnswerHeaders
    }

    /// Past this many, the memo starts over: a bound, not an LRU.
    static let capacity = 2_000
    private let known = Mutex<[Target: Entry]>([:])

    func get(_ target: Target) -> Entry? { known.withLock { $0[target] } }

    func set(_ target: Target, _ value: Entry) {
        known.withLock { map in
            if map.count >= RecentKeys.capacity { map.removeAll(keepingCapacity: true) }
            map[target] = value
        }
    }
}
