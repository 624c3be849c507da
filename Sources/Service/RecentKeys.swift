import Core
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
        /// What `format=best` would weigh: `AcceptHeader.bestTag`, where the target may ask
        /// for best (it says "best", or `output.format` is best); else empty.
        var bestTag = ""

        /// By the query alone (the tag is compared, not hashed): one string hashed per hit.
        func hash(into hasher: inout Hasher) { hasher.combine(query) }
    }

    /// Shared by reference: a hit copies one pointer out of the memo, not every field.
    final class Entry: Sendable {
        let identity: SourceIdentity
        let key: CacheKey
        let headers: AnswerHeaders
        /// An imgproxy URL's request as settled by the source's header (for `identity`):
        /// a later miss of the same URL on the same source reads no header again.
        let settled: ThumbRequest?
        /// `SourceStore.changeStamp()` as read before the identity was last found current;
        /// `UInt64.max` before it ever was.
        private let checked = Atomic<UInt64>(.max)

        init(identity: SourceIdentity, key: CacheKey, headers: AnswerHeaders, settled: ThumbRequest? = nil) {
            self.identity = identity
            self.key = key
            self.headers = headers
            self.settled = settled
        }

        var stamp: UInt64? {
            get {
                let s = checked.load(ordering: .acquiring)
                return s == .max ? nil : s
            }
            set { checked.store(newValue ?? .max, ordering: .releasing) }
        }
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
