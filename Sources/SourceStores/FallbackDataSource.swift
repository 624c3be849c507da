import Core
import Foundation
import Hashing
import Stores
import Syscalls

/// `images.fallback` given as data (imgproxy's `IMGPROXY_FALLBACK_IMAGE_DATA`): the image
/// written once into the cache folder, and answered under a reserved name no request can
/// say (it holds a NUL); every other source goes to the store it wraps.
public final class FallbackDataSource: SourceStore {
    /// The name the fallback's requests use for it.
    public static let reservedName = "\u{0}fallback"

    let base: any SourceStore
    let identity: SourceIdentity

    /// Writes `bytes` into `dir` (by their digest, whole or not at all); nil when it cannot.
    public init?(wrapping base: any SourceStore, bytes: [UInt8], dir: String) {
        self.base = base
        let digest = Hex.string(SHA256.digest(bytes))
        let path = dir + "/fallback-" + digest
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: path) {
            guard AtomicFile.write(path, bytes, temporary: path + ".\(getpid()).tmp") else { return nil }
        }
        identity = SourceIdentity(path: Self.reservedName, version: digest, location: path)
    }

    public var name: String { base.name }

    public func resolve(_ src: String) -> SourceResolution {
        src == Self.reservedName ? .ready(identity) : base.resolve(src)
    }

    public func isCurrent(_ known: SourceIdentity) -> Bool {
        known.path == Self.reservedName ? known == identity : base.isCurrent(known)
    }

    public func changeStamp() -> UInt64? { base.changeStamp() }

    public func fetch(_ src: String) -> Result<SourceIdentity, ServiceFailure> {
        src == Self.reservedName ? .success(identity) : base.fetch(src)
    }

    public func open(_ known: SourceIdentity) -> Result<OpenFile, ServiceFailure> {
        guard known.path == Self.reservedName else { return base.open(known) }
        switch OpenFile.open(identity.location) {
        case .success(let file): return .success(file)
        case .failure(let e):
            return .failure(
                ServiceFailure(
                    AspectError(.internalError, "the fallback image cannot be read"), stage: "source",
                    detail: "\(identity.location): \(e)"))
        }
    }

    public func readinessProblem() -> String? { base.readinessProblem() }
    public var cacheProblem: String? { base.cacheProblem }
    public var fetchFigures: FetchFigures? { base.fetchFigures }
    public func purge(_ src: String) -> Bool { base.purge(src) }
}
