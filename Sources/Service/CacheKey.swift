import Configuration
import Core
import Hashing
import Stores

/// What names a result: the canonical request, the source's identity, the output format
/// (for `format=auto`, whether WebP was acceptable: the rest follows from the source) and
/// the configured rules that change pixels (`Config.Images.renderingTag`). A changed
/// source, a different request, another format or other rules give another key.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// 64 hex digits: the SHA-256 of the parts.
    public let hex: String

    public init(canonical: String, source: SourceIdentity, format: String, rendering: String) {
        // The layout's version, raised when a release changes what a request renders:
        // 3 since sides that are exactly a half round up (w=104 on 2400×1600 is 104 wide);
        // 4 since `w` alone or `h` alone sets the scale by that side (w=50 on 640×427 is 50
        // wide, not 49), and `trim` may flatten transparency onto magenta; 5 since a JPEG
        // of at most 160,000 pixels is written baseline, not progressive (other bytes for
        // the same key: a strong ETag must not name both).
        let parts = ["aspect-cache-5", canonical, source.path, source.version, format, rendering]
        // NUL never appears in any part (the parser refuses it, a version is made without
        // it but for a file's, below), so the join is unambiguous.
        hex = SHA256.hex(parts.joined(separator: "\u{0}"))
    }

    /// The ETag: the key, quoted (strong).
    public var etag: String { "\"\(hex)\"" }

    public var description: String { hex }
}
