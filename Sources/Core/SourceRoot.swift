/// What `images.root` names: a folder, an HTTP(S) base URL, or an S3 bucket and prefix.
/// `src` is always a path below it (Core's rules: no `..`, no empty or dot segment, not
/// absolute), so a client can never name another host or bucket.
public enum SourceRoot: Equatable, Sendable {
    case folder(String)
    /// The base URL, ending in `/`.
    case http(base: String)
    /// The prefix is empty or ends in `/`.
    case s3(bucket: String, prefix: String)

    /// Parses a root; a folder is anything without `://`.
    public init(_ root: String) throws(ConfigError) {
        func bad(_ why: String) -> ConfigError { ConfigError(key: "images.root", message: why) }
        guard let schemeEnd = root.range(of: "://") else {
            self = .folder(root)
            return
        }
        let scheme = root[..<schemeEnd.lowerBound].lowercased()
        let rest = root[schemeEnd.upperBound...]
        guard !rest.contains(where: { $0 == "?" || $0 == "#" || $0 == " " || $0.asciiValue.map { $0 < 0x20 } == true })
        else {
            throw bad("a URL root may not hold a query, a fragment, spaces or control characters")
        }
        let authority = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(authority.count)
        switch scheme {
        case "http", "https":
            guard !authority.isEmpty else { throw bad("names no host: write http(s)://HOST/PATH/") }
            guard !authority.contains("@") else {
                throw bad("may not carry credentials (user:password@): they would show in logs and metrics")
            }
            self = .http(base: "\(scheme)://\(authority)\(path.hasSuffix("/") ? path : path + "/")")
        case "s3":
            guard SourceRoot.isBucketName(authority) else {
                throw bad(
                    "must name a bucket after s3:// (3 to 63 lower-case letters, digits, '.' and '-'), got '\(authority)'"
                )
            }
            var prefix = String(path.drop { $0 == "/" })
            if !prefix.isEmpty, !prefix.hasSuffix("/") { prefix += "/" }
            self = .s3(bucket: String(authority), prefix: prefix)
        default:
            throw bad(
                "must be a folder, an http:// or https:// URL, or s3://BUCKET/PREFIX/; '\(scheme)://' is not served")
        }
    }

    /// S3's rules for bucket names, as far as an endpoint's host name needs them.
    static func isBucketName(_ s: Substring) -> Bool {
        (3...63).contains(s.count)
            && s.utf8.allSatisfy {
                (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2E || $0 == 0x2D
            }
            && s.first != "." && s.first != "-" && s.last != "." && s.last != "-"
    }

    /// The URL that `src` names below an HTTP base: each segment percent-encoded, so a
    /// `?`, `#` or `%` in a file name stays part of the path.
    public static func url(base: String, src: String) -> String {
        base
            + src.split(separator: "/", omittingEmptySubsequences: false).map { PercentEncoding.encode(String($0)) }
            .joined(
                separator: "/")
    }

    /// A source a dialect's URL names, as a server whose base URL is the root takes it: a
    /// path relative to the root, or a full URL that lies under it (what follows the root
    /// is the path); any other full URL is a 403.
    public func relativePath(of source: String) throws(AspectError) -> String {
        let schemes = ["http://", "https://", "s3://", "local:///"]
        guard let scheme = schemes.first(where: { source.lowercased().hasPrefix($0) }) else { return source }
        let base: String? =
            switch self {
            case .http(let b): scheme.hasPrefix("http") ? b : nil
            case .s3(let bucket, let prefix): scheme == "s3://" ? "s3://\(bucket)/\(prefix)" : nil
            case .folder: scheme == "local:///" ? "local:///" : nil
            }
        guard let base, source.hasPrefix(base), source.count > base.count else {
            throw AspectError(
                .forbiddenPath,
                "the source \(quoted(source)) is not under this server's image root; give a path below it")
        }
        return String(source.dropFirst(base.count))
    }
}
