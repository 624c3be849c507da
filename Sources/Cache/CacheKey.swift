import Core
import Hashing

/// What names a cache entry: the canonical request, the source's identity, the output
/// format (for `format=auto`, whether WebP was acceptable: the rest follows from the
/// source) and the configured rules that change pixels (`Config.Images.renderingTag`).
/// A changed source, a different request, another format or other rules give another key.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// 64 hex digits: the SHA-256 of the parts.
    public let hex: String

    /// The identity of a source file: where it is, how long, when it last changed.
    public struct SourceIdentity: Sendable, Equatable {
        public var path: String
        public var size: Int64
        public var modifiedNanoseconds: Int64

        public init(path: String, size: Int64, modifiedNanoseconds: Int64) {
            self.path = path
            self.size = size
            self.modifiedNanoseconds = modifiedNanoseconds
        }
    }

    public init(canonical: String, source: SourceIdentity, format: String, rendering: String) {
        let parts = [
            "aspect-cache-2", canonical, source.path, "\(source.size)", "\(source.modifiedNanoseconds)", format,
            rendering,
        ]
        // NUL never appears in any part (the parser refuses it), so the join is unambiguous.
        hex = SHA256.hex(parts.joined(separator: "\u{0}"))
    }

    init(hex: String) { self.hex = hex }

    /// The ETag: the key, quoted (strong).
    public var etag: String { "\"\(hex)\"" }

    public var description: String { hex }
}
