import HTTP
import Stores
import Synchronization

/// Request targets seen lately and what they resolved to. A hit here still checks the
/// source's identity (a stat(2), the source cache's freshness, or the store's word that
/// nothing changed since the last check: `stamp`), so an edited source is never served
/// stale; it only saves parsing, the canonical form and the hash for a URL already seen.
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
        /// `SourceStore.changeStamp()` as read before the identity was last found current.
        var stamp: UInt64?
    }

    /// Past this many, the memo starts over: a bound, not an LRU.
    static let capacity = 2_000
    private let known = Mutex<[Target: Entry]>([:])

    func get(_ target: Target) -> Entry? { known.withLock { $0[target] } }

    /// Records that the entry for `target`, if it still has `key`, was found current
    /// after `stamp` was read.
    func stamp(_ target: Target, key: String, _ stamp: UInt64) {
        known.withLock { map in
            if map[target]?.key.hex == key { map[target]?.stamp = stamp }
        }
    }

    func set(_ target: Target, _ value: Entry) {
        known.withLock { map in
            if map.count >= RecentKeys.capacity { map.removeAll(keepingCapacity: true) }
            map[target] = value
        }
    }
}
