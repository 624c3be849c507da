import Core
import Foundation
import Hashing

/// AWS Signature Version 4 for S3 requests without a body (what fetching a source needs),
/// by the published algorithm: canonical request, string to sign, a key derived by an
/// HMAC chain, all HMAC-SHA256 and SHA-256 from GLib (the Hashing target).
public struct SigV4: Sendable {
    public struct Credentials: Sendable {
        public var accessKeyId: String
        public var secretAccessKey: String
        public var sessionToken: String?

        public init(accessKeyId: String, secretAccessKey: String, sessionToken: String? = nil) {
            self.accessKeyId = accessKeyId
            self.secretAccessKey = secretAccessKey
            self.sessionToken = sessionToken
        }
    }

    /// SHA-256 of an empty body, the payload hash of a GET.
    public static let emptyPayload = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    public let credentials: Credentials
    public let region: String
    public let service: String

    public init(credentials: Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The headers to send with a body-less request to `url` (its path already
    /// percent-encoded, as `S3Location` builds it): `X-Amz-Date`, `X-Amz-Content-SHA256`,
    /// `X-Amz-Security-Token` when there is a session token, and `Authorization`.
    public func headers(method: String = "GET", url: URL, date: Date, payloadHash: String = emptyPayload)
        -> [(name: String, value: String)]
    {
        let amzDate = Self.amzDate(date)
        let day = String(amzDate.prefix(8))
        var signed: [(String, String)] = [
            ("host", Self.hostHeader(url)), ("x-amz-content-sha256", payloadHash), ("x-amz-date", amzDate),
        ]
        if let token = credentials.sessionToken { signed.append(("x-amz-security-token", token)) }
        signed.sort { $0.0 < $1.0 }
        let signedNames = signed.map(\.0).joined(separator: ";")
        let canonical = [
            method, url.path(percentEncoded: true).isEmpty ? "/" : url.path(percentEncoded: true),
            Self.canonicalQuery(url), signed.map { "\($0.0):\($0.1)\n" }.joined(), signedNames, payloadHash,
        ].joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let toSign = ["AWS4-HMAC-SHA256", amzDate, scope, SHA256.hex(canonical)].joined(separator: "\n")
        var key = Array("AWS4\(credentials.secretAccessKey)".utf8)
        for part in [day, region, service, "aws4_request"] { key = HMACSHA256.mac(key: key, message: Array(part.utf8)) }
        let signature = Hex.string(HMACSHA256.mac(key: key, message: Array(toSign.utf8)))
        var out: [(name: String, value: String)] = [
            ("X-Amz-Date", amzDate), ("X-Amz-Content-SHA256", payloadHash),
        ]
        if let token = credentials.sessionToken { out.append(("X-Amz-Security-Token", token)) }
        out.append(
            (
                "Authorization",
                "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyId)/\(scope), SignedHeaders=\(signedNames), "
                    + "Signature=\(signature)"
            ))
        return out
    }

    /// `20261203T100405Z`, in UTC.
    static func amzDate(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ n: Int?) -> String { (n ?? 0) < 10 ? "0\(n ?? 0)" : "\(n ?? 0)" }
        return "\(c.year ?? 1970)\(two(c.month))\(two(c.day))T\(two(c.hour))\(two(c.minute))\(two(c.second))Z"
    }

    /// The Host header: the host, with the port when it is not the scheme's default.
    static func hostHeader(_ url: URL) -> String {
        let host = url.host(percentEncoded: true) ?? ""
        guard let port = url.port else { return host }
        let standard = (url.scheme == "https" && port == 443) || (url.scheme == "http" && port == 80)
        return standard ? host : "\(host):\(port)"
    }

    /// The query's pairs sorted by name then value, each already percent-encoded.
    static func canonicalQuery(_ url: URL) -> String {
        guard let q = url.query(percentEncoded: true), !q.isEmpty else { return "" }
        var pairs: [(name: String, value: String)] = []
        for p in q.split(separator: "&") {
            let parts = p.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            pairs.append((String(parts[0]), parts.count > 1 ? String(parts[1]) : ""))
        }
        pairs.sort { a, b in a.name == b.name ? a.value < b.value : a.name < b.name }
        return pairs.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }
}

/// Where an object lives: path style (`endpoint/bucket/key`, MinIO, R2, Ceph) or virtual
/// hosted (`https://bucket.s3.region.amazonaws.com/key`, AWS's default).
public struct S3Location: Sendable {
    public var endpoint: String
    public var bucket: String
    public var region: String
    public var pathStyle: Bool

    public init(endpoint: String, bucket: String, region: String, pathStyle: Bool) {
        self.endpoint = endpoint
        self.bucket = bucket
        self.region = region
        self.pathStyle = pathStyle
    }

    /// The object's URL, each byte of the key outside RFC 3986's unreserved set and `/`
    /// percent-encoded (S3's rule: the key is not encoded twice when signed).
    public func url(key: String) -> URL? {
        let path = Self.encode(key)
        if pathStyle {
            let base = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
            return URL(string: "\(base)/\(bucket)/\(path)")
        }
        guard endpoint.isEmpty else {
            // A custom endpoint, virtual hosted: the bucket goes before its host.
            guard let e = URL(string: endpoint), let scheme = e.scheme, let host = e.host() else { return nil }
            let port = e.port.map { ":\($0)" } ?? ""
            return URL(string: "\(scheme)://\(bucket).\(host)\(port)/\(path)")
        }
        return URL(string: "https://\(bucket).s3.\(region).amazonaws.com/\(path)")
    }

    static func encode(_ key: String) -> String { PercentEncoding.encode(key, keeping: [UInt8(ascii: "/")]) }
}
