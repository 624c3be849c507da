import Core
import Syscalls

/// What the service knows of its three parts: where sources come from, where results
/// are kept, and what turns one into the other. The `aspect` executable wires the real
/// ones (a folder, an HTTP origin or an S3 bucket; the disk cache; libvips); the service
/// sees only these protocols.

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
    /// Only a fetch (or a conditional request) can tell: `fetch` it off the event loop.
    case needsFetch
    case failed(ServiceFailure)
}

/// Where sources live. `resolve` and `isCurrent` run on the event loop and must not block
/// on a network; `fetch` runs on a fetch thread and may; `open` runs on an image worker.
public protocol SourceStore: Sendable {
    /// For logs and the start-up line: the folder or the base URL, never a credential.
    var name: String { get }
    func resolve(_ src: String) -> SourceResolution
    /// Whether an identity resolved earlier still holds, at the cost of a stat at most.
    func isCurrent(_ known: SourceIdentity) -> Bool
    /// Makes the source available to `open` (downloaded, or revalidated), and says which
    /// version it is.
    func fetch(_ src: String) -> Result<SourceIdentity, ServiceFailure>
    func open(_ identity: SourceIdentity) -> Result<SourceFile, ServiceFailure>
    /// Why the service cannot serve at all (`/readyz` answers 503), or nil. A remote
    /// origin's health is not asked: a dead origin gives 502s, not a restart loop.
    func readinessProblem() -> String?
    /// Counters of fetches, for `/metrics`; nil for a store that never fetches.
    var fetchMetrics: FetchMetrics? { get }
}

/// A result held by the result store.
public struct StoredResult: Sendable {
    public var path: String
    /// An image format's name, or `json` (an `/info` answer).
    public var kind: String
    public var size: Int64

    public init(path: String, kind: String, size: Int64) {
        self.path = path
        self.kind = kind
        self.size = size
    }

    public var contentType: String { ResultKind.contentType(kind) }
}

/// What a result is, by the name the store files it under.
public enum ResultKind {
    public static let info = "json"

    public static func contentType(_ kind: String) -> String {
        ImageFormat(rawValue: kind)?.mimeType ?? "application/json"
    }
}

/// Where results are kept, by key (64 hex digits).
public protocol ResultStore: Sendable {
    func result(_ key: String) -> StoredResult?
    /// Writes a result whole or not at all; false when it could not be kept.
    @discardableResult
    func keep(_ key: String, _ bytes: [UInt8], kind: String) -> Bool
    /// Forgets an entry whose file has gone.
    func drop(_ key: String)
    /// Why results cannot be kept now (the service then serves uncached), or nil.
    var problem: String? { get }
    var figures: (bytes: Int64, entries: Int, evictions: Int) { get }
}

/// Turns a source into a result: reads the header, asks `order` what to make (the
/// service plans), and renders it; or describes it for `/info`.
public protocol Renderer: Sendable {
    func render(_ file: SourceFile, order: (SourceDescription) throws(AspectError) -> RenderOrder)
        throws(ServiceFailure) -> (bytes: [UInt8], format: ImageFormat)
    /// The header's facts and a small upright decode (at most 100 pixels a side).
    func describe(_ file: SourceFile) throws(ServiceFailure) -> SourceFacts
}
