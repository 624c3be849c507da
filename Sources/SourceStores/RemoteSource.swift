internal import CLinux
import Configuration
import Core
import Foundation
import Glibc
import Hashing
import Remote
import Stores
import Synchronization
import Syscalls
import Workers

/// Where a remote source is fetched from: the request for a `src`, and what an error
/// answer says (an S3 error document names its code).
public protocol Origin: Sendable {
    /// The base URL or bucket, for logs; never a credential.
    var name: String { get }
    /// The URL and the headers ("Name: value") of the GET for `src`, made now (a signature
    /// is dated).
    func request(_ src: String) -> (url: String, headers: [String])?
    /// For the log: what an error answer's body says, in a few words.
    func explain(status: Int, body: String) -> String
}

/// The limits of fetching: the `sources.*` keys and `limits.maxSourceBytes`.
public struct FetchSettings: Sendable {
    public var sources = Config().sources
    public var maxBytes: Int64 = Config().limits.maxSourceBytes

    public init() {}

    public init(_ config: Config) {
        sources = config.sources
        maxBytes = config.limits.maxSourceBytes
    }
}

/// Sources behind an HTTP origin or in an S3 bucket, fetched with libcurl into the source
/// cache. A source checked with the origin within `revalidateSeconds` is used without
/// asking it; after that, one conditional request (If-None-Match, else If-Modified-Since)
/// decides. That re-check runs on threads of its own while the kept copy is served, for
/// up to `staleSeconds` more (stale while revalidate): a stalled origin holds up no source
/// already kept. Identical fetches in flight are made once. A download that cannot be kept
/// (the cache's disk full) is still served, from memory, and `cacheProblem` says so.
public final class RemoteSource: SourceStore {
    let origin: any Origin
    let settings: FetchSettings
    let cache: SourceCache
    let metrics = FetchMetrics()
    private let flights = Coalescer<Result<SourceIdentity, ServiceFailure>>()
    /// The process's libcurl client (its handles keep their connections for the next fetch).
    let client: CurlClient
    /// Re-checks of kept sources, apart from the fetches clients wait on, one per source.
    private let rechecks = ThreadPool(name: "aspect-recheck", threads: 2, queueDepth: 256)
    private let pendingRechecks = Mutex<Set<String>>([])
    /// Downloads that could not be kept on disk, in memory for the requests that asked:
    /// the last few only.
    private let unkept = Mutex<[(identity: SourceIdentity, file: OpenFile)]>([])
    static let unkeptCapacity = 8
    /// Why the last download could not be kept, until one can.
    let keepProblem = Mutex<String?>(nil)

    /// What a kept source's age is told by (monotonic nanoseconds): `Clock.now`, or a
    /// test's clock, so that a window of seconds is tested without waiting it out.
    let now: @Sendable () -> UInt64

    /// `cacheDir` holds the downloaded sources, up to `cacheMaxBytes`.
    public init(
        origin: any Origin, settings: FetchSettings, cacheDir: String, cacheMaxBytes: Int64,
        client: CurlClient = .shared, clock: @escaping @Sendable () -> UInt64 = { Clock.now() }
    ) {
        self.origin = origin
        self.settings = settings
        self.client = client
        now = clock
        cache = SourceCache(dir: cacheDir, maxBytes: cacheMaxBytes)
    }

    public var name: String { origin.name }
    public var fetchFigures: FetchFigures? { metrics.snapshot }
    /// A remote origin's health does not decide readiness (SPEC: Sources).
    public func readinessProblem() -> String? { nil }
    /// Why downloads cannot be kept (served from memory instead), or nil.
    public var cacheProblem: String? { cache.problem ?? keepProblem.withLock { $0 } }

    /// How a kept source stands: checked within `revalidateSeconds`, within the stale
    /// window after it, or past both (or never checked since start).
    enum Age { case fresh, stale, expired }

    private func age(_ checkedAt: UInt64, now: UInt64) -> Age {
        guard checkedAt > 0 else { return .expired }
        let elapsed = now &- checkedAt
        let fresh = UInt64(settings.sources.revalidateSeconds) * 1_000_000_000
        if elapsed < fresh { return .fresh }
        return elapsed < fresh + UInt64(settings.sources.staleSeconds) * 1_000_000_000 ? .stale : .expired
    }

    /// Starts a re-check of `src` on the re-check threads, unless one is pending. It never
    /// blocks: called on the event loop.
    private func recheck(_ src: String) {
        guard pendingRechecks.withLock({ $0.insert(src).inserted }) else { return }
        metrics.recheckQueue(1)
        let submitted = rechecks.submit { [self] in
            metrics.recheckQueue(-1)
            _ = fetch(src)
            pendingRechecks.withLock { _ = $0.remove(src) }
        }
        if !submitted {
            metrics.recheckQueue(-1)
            pendingRechecks.withLock { _ = $0.remove(src) }
        }
    }

    func identity(_ record: SourceCache.Record) -> SourceIdentity {
        SourceIdentity(path: record.src, version: record.version, location: cache.bodyPath(record))
    }

    /// Removes the downloaded copy of `src` and its record: the next request fetches it.
    public func purge(_ src: String) -> Bool {
        guard cache.entry(src) != nil else { return false }
        cache.remove(src)
        return true
    }

    public func resolve(_ src: String) -> SourceResolution {
        guard let e = cache.entry(src) else { return .needsFetch }
        switch age(e.checkedAt, now: now()) {
        case .fresh: return .ready(identity(e.record))
        case .expired: return .needsFetch
        case .stale:
            recheck(src)
            metrics.servedStale()
            return .stale(identity(e.record))
        }
    }

    public func isCurrent(_ known: SourceIdentity) -> Bool {
        guard let e = cache.entry(known.path), e.record.version == known.version else { return false }
        switch age(e.checkedAt, now: now()) {
        case .fresh: return true
        case .expired: return false
        case .stale:
            recheck(known.path)
            metrics.servedStale()
            return true
        }
    }

    public func fetch(_ src: String) -> Result<SourceIdentity, ServiceFailure> {
        flights.run(src) {
            // Brought by a flight that ended after this request was told to fetch: not asked again.
            if let e = cache.entry(src), case .fresh = age(e.checkedAt, now: now()),
                access(cache.bodyPath(e.record), F_OK) == 0
            {
                return .success(identity(e.record))
            }
            return download(src)
        }.0
    }

    /// The version resolved, by its own file. Evicted meanwhile (a small source cache
    /// under load): fetched again, and used if the origin still has that version.
    public func open(_ identity: SourceIdentity) -> Result<OpenFile, ServiceFailure> {
        if identity.location.isEmpty, let held = heldUnkept(identity) { return .success(held) }
        if !identity.location.isEmpty, case .success(let f) = OpenFile.open(identity.location) { return .success(f) }
        switch fetch(identity.path) {
        case .failure(let f): return .failure(f)
        case .success(let now) where now.version == identity.version:
            if now.location.isEmpty, let held = heldUnkept(now) { return .success(held) }
            return OpenFile.open(now.location).mapError {
                ServiceFailure(
                    AspectError(.internalError, "the fetched source cannot be opened"), stage: "fetch",
                    detail: "\($0)")
            }
        case .success:
            return .failure(
                ServiceFailure(
                    AspectError(.upstreamError, "the source changed at the origin while it was being served; retry"),
                    stage: "fetch"))
        }
    }

    private func heldUnkept(_ identity: SourceIdentity) -> OpenFile? {
        unkept.withLock { list in list.last { $0.identity == identity }?.file }
    }

    /// A whole download that could not be kept: held for `open`, and the reason reported.
    func holdUnkept(_ record: SourceCache.Record, _ file: OpenFile, why: String) -> SourceIdentity {
        let identity = SourceIdentity(path: record.src, version: record.version, location: "")
        unkept.withLock { list in
            list.removeAll { $0.identity.path == record.src }
            if list.count >= Self.unkeptCapacity { list.removeFirst() }
            list.append((identity, file))
        }
        keepProblem.withLock { $0 = "downloads cannot be kept in \(cache.dir): \(why)" }
        return identity
    }

    // MARK: Fetching

    private func download(_ src: String) -> Result<SourceIdentity, ServiceFailure> {
        let start = Clock.now()
        metrics.started()
        let (result, outcome, bytes) = transfer(src)
        metrics.finished(outcome, bytes: bytes, seconds: Double(Clock.now() - start) / 1e9)
        return result
    }

    func failure(_ code: AspectError.Code, _ message: String, _ detail: String) -> ServiceFailure {
        ServiceFailure(AspectError(code, message), stage: "fetch", detail: detail)
    }

    /// How a fetch ended: the identity, or the failure; the outcome counted; bytes received.
    typealias Fetched = (Result<SourceIdentity, ServiceFailure>, FetchMetrics.Outcome, Int64)

    /// One fetch, redirects included: the identity, or the failure; how it ended; bytes.
    private func transfer(_ src: String) -> Fetched {
        let known = cache.entry(src)?.record
        guard let (url, asked) = origin.request(src) else {
            return (
                .failure(failure(.internalError, "the source URL cannot be made", "no URL for src \(src)")), .error, 0
            )
        }
        var headers = asked
        if let known {
            if !known.etag.isEmpty {
                headers.append("If-None-Match: \(known.etag)")
            } else if !known.lastModified.isEmpty {
                headers.append("If-Modified-Since: \(known.lastModified)")
            }
        }
        // Into the source cache's folder, or (that folder unwritable, its disk full) into
        // memory: a download that cannot be kept is still served.
        var temp = cache.temporaryFile()
        var unkeptWhy = temp == nil ? String(cString: strerror(errno)) : ""
        if temp == nil { temp = Self.memoryFile() }
        guard var temp else {
            return (
                .failure(
                    failure(
                        .internalError, "the source cannot be downloaded",
                        "no file to download into: \(String(cString: strerror(errno)))")),
                .error, 0
            )
        }
        var kept = false
        defer {
            if !kept {
                close(temp.fd)
                if !temp.path.isEmpty { unlink(temp.path) }
            }
        }
        let r: CurlClient.Transfer
        switch follow(url, headers, into: &temp, unkeptWhy: &unkeptWhy) {
        case .success(let answer): r = answer
        case .failure(let why): return (.failure(why), .error, 0)
        }
        if let refused = refusal(r) { return refused }
        let status = r.status
        let errorBody = String(decoding: r.body, as: UTF8.self)
        switch status {
        case 200...299:
            if r.contentLength >= 0, r.bytes != r.contentLength {
                return (
                    .failure(
                        failure(
                            .upstreamError, "the origin sent a source shorter than it announced",
                            "\(r.bytes) of \(r.contentLength) bytes")), .error, r.bytes
                )
            }
            let body = OpenFile(owning: temp.fd)
            kept = true  // `body` owns the descriptor now
            return keep(src, r, body: body, path: temp.path, known: known, unkeptWhy: unkeptWhy)
        case 304:
            guard let known else { break }
            cache.confirmed(src, at: now())
            return (.success(identity(known)), .notModified, 0)
        case 404, 410:
            cache.remove(src)
            return (
                .failure(
                    failure(
                        .notFound, "no such source image: \(src) (the origin answered \(status))",
                        origin.explain(status: status, body: errorBody))), .notFound, 0
            )
        default:
            break
        }
        return (
            .failure(
                failure(
                    .upstreamError, "the origin answered \(status)",
                    origin.explain(status: status, body: errorBody))), .error, 0
        )
    }

    /// Same scheme, host and port: the only redirects followed.
    static func sameOrigin(_ a: String, _ b: String) -> Bool {
        guard let x = URLComponents(string: a), let y = URLComponents(string: b) else { return false }
        return x.scheme?.lowercased() == y.scheme?.lowercased() && x.host?.lowercased() == y.host?.lowercased()
            && x.port == y.port
    }

    /// A URL for the log: its query (a signature's) left out.
    static func redacted(_ url: String) -> String {
        String(url.prefix { $0 != "?" })
    }

    /// The SHA-256 of a download, for a source the origin gave no validator for, or one
    /// whose validator did not change.
    static func digest(_ file: OpenFile, _ count: Int64) -> String {
        guard let bytes = file.read(count: Int(count)) else { return "" }
        return Hex.string(SHA256.digest(bytes))
    }

    static func digest(path: String) -> String {
        guard case .success(let file) = OpenFile.open(path), let size = file.regularFileSize else { return "" }
        return digest(file, size)
    }

    /// A file in memory to download into, when the source cache's folder cannot take it.
    static func memoryFile() -> (path: String, fd: Int32)? {
        let fd = clinux_memfd("aspect-source")
        return fd >= 0 ? ("", fd) : nil
    }
}
