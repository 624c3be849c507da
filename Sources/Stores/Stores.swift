import Core
import Syscalls

/// What the service knows of its three parts: where sources come from, where results
/// are kept, and what turns one into the other, and the values they speak. This target
/// holds no implementation: the service depends on it, and so do the stores (Origins,
/// Cache), which never see the service. The `aspect` executable wires the real ones (a
/// folder, an HTTP origin or an S3 bucket; the disk cache; libvips).

/// Which version of which source a result was made from: its part of the cache key.
public struct SourceIdentity: Sendable, Equatable {
    /// `src` as requested.
    public var path: String
    /// What changes when the source does: size and modification time of a file, the ETag
    /// (else Last-Modified and length) of a remote object.
    public var version: String
    /// Where the store finds the bytes again (a path below the root, a file in the source
    /// cache); not part of the key.
    public var location: String

    public init(path: String, version: String, location: String) {
        self.path = path
        self.version = version
        self.location = location
    }

    /// A file's version: its size and modification time, joined as in the keys before
    /// sources could be remote, so the results cached then stay valid.
    public static func fileVersion(size: Int64, modifiedNanoseconds: Int64) -> String {
        "\(size)\u{0}\(modifiedNanoseconds)"
    }
}

/// A failure with a public error (what the client reads) and, for the log only, the rest.
public struct ServiceFailure: Error, Sendable, CustomStringConvertible {
    public var error: AspectError
    /// Where it happened: `open`, `fetch`, `decode`, …
    public var stage: String
    /// For the log: libvips' words, the origin's status line, the S3 error code.
    public var detail: String

    public init(_ error: AspectError, stage: String, detail: String = "") {
        self.error = error
        self.stage = stage
        self.detail = detail
    }

    public var description: String { detail.isEmpty ? "\(stage): \(error)" : "\(stage): \(error) [\(detail)]" }
}

/// What a source store can say about `src` without waiting on a network.
public enum SourceResolution: Sendable {
    /// Known and current: render or serve from it.
    case ready(SourceIdentity)
    /// Known, due a re-check that the store has started in the background: serve from it
    /// meanwhile (stale while revalidate, for at most `sources.staleSeconds`).
    case stale(SourceIdentity)
    /// Only a fetch (or a conditional request) can tell: `fetch` it off the event loop.
    case needsFetch
    case failed(ServiceFailure)
}

/// Where sources live. `resolve` and `isCurrent` run on the event loop and must not block
/// on a network (a re-check they start runs elsewhere); `fetch` runs on a fetch thread and
/// may; `open` runs on an image worker.
public protocol SourceStore: Sendable {
    /// For logs and the start-up line: the folder or the base URL, never a credential.
    var name: String { get }
    func resolve(_ src: String) -> SourceResolution
    /// Whether an identity resolved earlier may still be served, at the cost of a stat at
    /// most (a stale one may, while its re-check is pending).
    func isCurrent(_ known: SourceIdentity) -> Bool
    /// A count that moves whenever a source this store resolved may have changed, or nil
    /// when the store cannot tell. An identity found current by `isCurrent` after the
    /// count was read is still current while the count reads the same.
    func changeStamp() -> UInt64?
    /// Makes the source available to `open` (downloaded, or revalidated), and says which
    /// version it is.
    func fetch(_ src: String) -> Result<SourceIdentity, ServiceFailure>
    func open(_ identity: SourceIdentity) -> Result<OpenFile, ServiceFailure>
    /// Why the service cannot serve at all (`/readyz` answers 503), or nil. A remote
    /// origin's health is not asked: a dead origin gives 502s, not a restart loop.
    func readinessProblem() -> String?
    /// Why sources are served but not kept (a source cache on a full disk), or nil.
    var cacheProblem: String? { get }
    /// Figures of fetching, for `/metrics`; nil for a store that never fetches.
    var fetchFigures: FetchFigures? { get }
    /// Forgets what is kept of `src` (a downloaded copy); whether there was something.
    func purge(_ src: String) -> Bool
}

extension SourceStore {
    /// A store that cannot tell is asked `isCurrent` every time.
    public func changeStamp() -> UInt64? { nil }

    /// A store that keeps no copies has nothing to forget.
    public func purge(_ src: String) -> Bool { false }
}

/// A result held by the result store, open: the store opened it, and the body is whole.
public struct StoredResult: Sendable {
    /// An image format's name, or `json` (an `/info` answer).
    public var kind: String
    public var size: Int64
    public var body: OpenFile

    public init(kind: String, size: Int64, body: OpenFile) {
        self.kind = kind
        self.size = size
        self.body = body
    }

    /// The whole result in memory: held already, or read now.
    public var bytes: [UInt8]? {
        if let held = body.contents, Int64(held.count) == size { return held }
        return body.read(count: Int(size))
    }

    public var contentType: String { ResultKind.contentType(kind) }
}

/// What a result is, by the name the store files it under.
public enum ResultKind {
    public static let info = "json"

    public static func contentType(_ kind: String) -> String {
        ImageFormat(rawValue: String(kind.prefix { $0 != "-" }))?.mimeType ?? "application/json"
    }

    /// An image result's kind: its format; `-qN` when the encoder chose the quality
    /// (`q=auto`, `maxbytes`), so that a hit can say it (`X-Quality`); `-best` when
    /// `format=best` chose the format, `-best-lossless` for WebP's lossless mode, so that
    /// a hit can say the choice (`X-Format-Chosen`).
    public static func image(_ format: ImageFormat, quality: Int?, chosen: BestChoice? = nil) -> String {
        var kind = format.rawValue
        if let quality { kind += "-q\(quality)" }
        if let chosen { kind += chosen.lossless && chosen.format == .webp ? "-best-lossless" : "-best" }
        return kind
    }

    /// What an image kind says, read once: its format, the quality the encoder chose and
    /// `format=best`'s choice; nil for a name this version does not write (the tokens in
    /// `image`'s order, `qN` from 1 to 100 as written, `lossless` only after `best` on a WebP).
    public static func parts(_ kind: String) -> (format: ImageFormat, quality: Int?, chosen: BestChoice?)? {
        var tokens = kind.split(separator: "-", omittingEmptySubsequences: false)[...]
        guard let name = tokens.popFirst(), let format = ImageFormat(rawValue: String(name)) else { return nil }
        var quality: Int?
        if let q = tokens.first, q.first == "q" {
            guard let n = Int(q.dropFirst()), (1...100).contains(n), q.dropFirst() == "\(n)" else { return nil }
            quality = n
            tokens.removeFirst()
        }
        var chosen: BestChoice?
        if tokens.first == "best" {
            tokens.removeFirst()
            let lossless = tokens.first == "lossless" && format == .webp
            if lossless { tokens.removeFirst() }
            chosen = BestChoice(format: format, lossless: lossless || format == .png)
        }
        return tokens.isEmpty ? (format, quality, chosen) : nil
    }

    /// The quality a kind names, if any.
    public static func quality(_ kind: String) -> Int? { parts(kind)?.quality }

    /// `format=best`'s choice a kind names, if any.
    public static func chosen(_ kind: String) -> BestChoice? { parts(kind)?.chosen }

    /// Whether a stored file's kind is one this version writes.
    public static func isKnown(_ kind: String) -> Bool { kind == info || parts(kind) != nil }
}

/// Where results are kept, by key (64 hex digits).
public protocol ResultStore: Sendable {
    /// The result, open, or nil on a miss (an entry whose file has gone is forgotten).
    func result(_ key: String) -> StoredResult?
    /// Writes a result whole or not at all, listed under `source` (its `src`) for a purge;
    /// false when it could not be kept.
    @discardableResult
    func keep(_ key: String, _ bytes: [UInt8], kind: String, source: String) -> Bool
    /// Removes every result kept for `source`; the keys that were there.
    func purge(source: String) -> Set<String>
    /// On a local miss, from a worker: the result from a shared tier, kept locally too;
    /// nil without one, or on its miss.
    func sharedResult(_ key: String, source: String) -> StoredResult?
    /// A shared tier's counts, for `/metrics`; nil without one.
    var sharedFigures: SharedFigures? { get }
    /// Why results cannot be kept now (the service then serves uncached), or nil.
    var problem: String? { get }
    var figures: (bytes: Int64, entries: Int, evictions: Int) { get }
    /// Whether the store's index is still being filled from its folder, or the folder
    /// trimmed to its cap (issue 38: the store serves meanwhile).
    var isIndexing: Bool { get }
}

/// A render's result.
public struct RenderedImage: Sendable {
    public var bytes: [UInt8]
    public var format: ImageFormat
    /// The quality the encoder chose (`q=auto`, `maxbytes`); nil when it was the one asked.
    public var quality: Int?
    /// `/info`'s facts from the render's own decode, when asked for and the decode could
    /// give them (a whole still source: SPEC: Efficiency).
    public var facts: SourceFacts?
    /// `format=best`'s choice (`format` is its format), when it chose.
    public var chosen: BestChoice?

    public init(
        bytes: [UInt8], format: ImageFormat, quality: Int? = nil, facts: SourceFacts? = nil, chosen: BestChoice? = nil
    ) {
        self.bytes = bytes
        self.format = format
        self.quality = quality
        self.facts = facts
        self.chosen = chosen
    }
}

extension ResultStore {
    public var isIndexing: Bool { false }
    public func sharedResult(_ key: String, source: String) -> StoredResult? { nil }
    public var sharedFigures: SharedFigures? { nil }
}

/// What a shared result tier has counted (SPEC: Shared results and purging).
public struct SharedFigures: Sendable {
    public enum Upload: Int, CaseIterable, Sendable {
        case ok, failed, dropped
        public var label: String { ["ok", "failed", "dropped"][rawValue] }
    }

    public var hits = 0
    public var misses = 0
    /// By `Upload`'s order.
    public var uploads = [Int](repeating: 0, count: Upload.allCases.count)
    /// Uploads waiting.
    public var queued = 0

    public init() {}
}

/// Turns a source into a result: reads the header, asks `order` what to make (the
/// service plans), and renders it; or describes it for `/info`.
public protocol Renderer: Sendable {
    /// The source read as `reading` says (its page, the border trimmed away first, EXIF
    /// orientation applied or not), planned by `order` once the header is read; the
    /// description's size is the trimmed one. `wantFacts`: `/info`'s facts too, from the
    /// same decode, where it can.
    func render(
        _ file: OpenFile, reading: SourceReading, wantFacts: Bool,
        order: (SourceDescription) throws(AspectError) -> RenderOrder
    )
        throws(ServiceFailure) -> RenderedImage
    /// The header's facts of the page and a small upright decode (at most 100 pixels a side).
    func describe(_ file: OpenFile, reading: SourceReading) throws(ServiceFailure) -> SourceFacts
    /// What the header says, no pixel decoded (no trim applied): what an imgproxy URL's
    /// request needs to know before it has a key (SPEC: imgproxy URLs).
    func header(_ file: OpenFile, reading: SourceReading) throws(ServiceFailure) -> SourceDescription
    /// Render workers' counts (SPEC: Isolation), for `/metrics`; nil for an in-process renderer.
    var workerFigures: WorkerFigures? { get }
    /// Why nothing can be rendered now (`/readyz` answers 503), or nil.
    func readinessProblem() -> String?
}

extension Renderer {
    public var workerFigures: WorkerFigures? { nil }
    public func readinessProblem() -> String? { nil }
}

/// What the render workers have counted (SPEC: Isolation).
public struct WorkerFigures: Sendable {
    /// Workers running now.
    public var live: Int
    /// Replacements, by why the worker went: `signal`, `seccomp`, `memory`, `deadline`, `exit`,
    /// `protocol` (an answer that could not be trusted), `age` (`server.workerJobs` made),
    /// `failed` (replaced after a render that failed: a bad source, say).
    public var restarts: [String: Int]
    /// Every reason `restarts` counts by, in the order `/metrics` lists them.
    public static let reasons = ["signal", "seccomp", "memory", "deadline", "exit", "protocol", "age", "failed"]
    /// The Landlock ABI the workers are held by (0: the kernel has none); nil before one started.
    public var landlock: Int?

    public init(live: Int, restarts: [String: Int]) {
        self.live = live
        self.restarts = restarts
    }
}

/// What a fetching source store has counted, at one moment, for `/metrics`.
public struct FetchFigures: Sendable {
    /// How a fetch ended.
    public enum Outcome: String, CaseIterable, Sendable {
        /// Downloaded whole.
        case downloaded
        /// A conditional request answered 304: the kept copy is current.
        case notModified = "not_modified"
        case notFound = "not_found"
        case tooLarge = "too_large"
        case timeout
        /// Refused, reset, a 5xx, a 4xx other than 404/410, a redirect not followed.
        case error
    }

    /// Fetch-time histogram bounds, in seconds.
    public static let bounds: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

    /// By `Outcome.allCases`' order.
    public var outcomes = [Int](repeating: 0, count: Outcome.allCases.count)
    public var bytes: Int64 = 0
    public var inFlight = 0
    /// Re-checks waiting for their thread (fetches for clients wait in the service's queue).
    public var recheckQueue = 0
    /// Sources served while their re-check was pending or had failed.
    public var servedStale = 0
    public var fetchTime = Histogram(bounds: FetchFigures.bounds)

    public init() {}

    public subscript(_ outcome: Outcome) -> Int {
        get { outcomes[Outcome.allCases.firstIndex(of: outcome) ?? 0] }
        set { outcomes[Outcome.allCases.firstIndex(of: outcome) ?? 0] = newValue }
    }
}

/// Observations counted into fixed buckets, as a Prometheus histogram keeps them: each
/// bucket counts the observations at most its bound, with the count and sum of all.
public struct Histogram: Sendable {
    public let bounds: [Double]
    public private(set) var buckets: [Int]
    public private(set) var count = 0
    public private(set) var sum = 0.0

    public init(bounds: [Double]) {
        self.bounds = bounds
        buckets = [Int](repeating: 0, count: bounds.count)
    }

    public mutating func observe(_ value: Double) {
        count += 1
        sum += value
        for (i, b) in bounds.enumerated() where value <= b { buckets[i] += 1 }
    }
}
