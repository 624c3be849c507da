import Core
import Foundation
import Hashing
import Stores
import Synchronization
import Workers

/// The local result store with a shared one behind it in S3 (SPEC: Shared results and
/// purging): `cache.shared = s3://BUCKET/PREFIX/`. Hits on the event loop are local only;
/// a local miss asks the shared tier from its worker, before rendering (a shared hit is
/// copied to the local cache and served); a render is kept locally at once and uploaded
/// behind the answer, by one thread of a bounded pool that drops rather than waits.
/// Objects are `PREFIX/SOURCEHASH/KEY`, SOURCEHASH the first 16 hex digits of SHA-256 of
/// `src`; the content type says the kind (`image/jpeg; kind=jpeg-q62`).
public final class TieredResultStore: ResultStore {
    let local: any ResultStore
    let bucket: S3Bucket
    let prefix: String
    let queueLimit: Int
    /// Where a failed upload or listing is said: the event log, from the wiring.
    let log: @Sendable (String) -> Void
    /// One thread, at most `queueLimit` waiting: a full queue drops an upload, never a request.
    private let uploads: ThreadPool
    private let counts = Mutex(SharedFigures())

    public init(
        local: any ResultStore, bucket: S3Bucket, prefix: String, queueLimit: Int,
        log: @escaping @Sendable (String) -> Void
    ) {
        self.local = local
        self.log = log
        self.bucket = bucket
        self.prefix = prefix
        self.queueLimit = queueLimit
        uploads = ThreadPool(name: "aspect-upload", threads: 1, queueDepth: max(1, queueLimit))
    }

    /// `PREFIX/SOURCEHASH/`: one source's variants.
    public func sourcePrefix(_ source: String) -> String { prefix + SourceHash.of(source) + "/" }

    public func result(_ key: String) -> StoredResult? { local.result(key) }

    public func sharedResult(_ key: String, source: String) -> StoredResult? {
        guard let object = bucket.get(sourcePrefix(source) + key),
            case let kind = Self.kind(contentType: object.contentType), ResultKind.isKnown(kind)
        else {
            counts.withLock { $0.misses += 1 }
            return nil
        }
        counts.withLock { $0.hits += 1 }
        // Kept locally (not uploaded again), then served from there; a local cache that
        // cannot keep it makes this a miss (the render is then served uncached).
        guard local.keep(key, object.body, kind: kind, source: source), let kept = local.result(key) else { return nil }
        return kept
    }

    public func keep(_ key: String, _ bytes: [UInt8], kind: String, source: String) -> Bool {
        let kept = local.keep(key, bytes, kind: kind, source: source)
        let admitted = counts.withLock { c -> Bool in
            guard c.queued < queueLimit else {
                c.uploads[SharedFigures.Upload.dropped.rawValue] += 1
                return false
            }
            c.queued += 1
            return true
        }
        guard admitted else { return kept }
        let object = sourcePrefix(source) + key
        let type = ResultKind.contentType(kind) + "; kind=" + kind
        let submitted = uploads.submit { [self] in
            let ok = bucket.put(object, bytes, contentType: type)
            counts.withLock {
                $0.queued -= 1
                $0.uploads[(ok ? SharedFigures.Upload.ok : .failed).rawValue] += 1
            }
            if !ok { log("uploading \(object) to the shared tier failed") }
        }
        if !submitted {
            counts.withLock {
                $0.queued -= 1
                $0.uploads[SharedFigures.Upload.dropped.rawValue] += 1
            }
        }
        return kept
    }

    /// Local and shared variants of `source`, each counted once.
    public func purge(source: String) -> Set<String> {
        var keys = local.purge(source: source)
        let under = sourcePrefix(source)
        if let shared = bucket.list(prefix: under) {
            for object in bucket.delete(shared) { keys.insert(String(object.dropFirst(under.count))) }
        } else {
            log("listing \(under) in the shared tier failed: its variants there were not purged")
        }
        return keys
    }

    public var problem: String? { local.problem }
    public var figures: (bytes: Int64, entries: Int, evictions: Int) { local.figures }
    public var isIndexing: Bool { local.isIndexing }
    public var sharedFigures: SharedFigures? { counts.withLock { $0 } }

    /// The kind a content type says (`image/webp; kind=webp-q55`), else the format's.
    static func kind(contentType: String) -> String {
        if let r = contentType.range(of: "kind=") {
            return String(contentType[r.upperBound...].prefix { $0 != ";" && $0 != " " })
        }
        let mime = contentType.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces)
        return ImageFormat.allCases.first { $0.mimeType == mime }?.rawValue
            ?? (mime == "application/json" ? ResultKind.info : "")
    }
}
