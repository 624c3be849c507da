import Configuration
import Core
import Foundation
import Hashing
import Remote
import S3

/// The few S3 calls the shared result tier makes (GET, PUT, ListObjectsV2, DeleteObjects), each a
/// whole request in memory through the process's libcurl client, signed by the same SigV4
/// as the S3 source.
public final class S3Bucket: Sendable {
    public let access: S3Access
    public var location: S3Location { access.location }
    let client: CurlClient
    /// The sources' timeouts and CA bundle; results larger than its size bound (the local
    /// cache's own) are not fetched whole.
    let limits: CurlClient.Limits

    public init(bucket: String, s3: Config.S3, sources: Config.Sources, maxBytes: Int64, client: CurlClient = .shared) {
        access = S3Access(bucket: bucket, s3: s3)
        limits = CurlClient.Limits(sources, maxBytes: maxBytes)
        self.client = client
    }

    /// What one call got: the status (0 when no answer came), the body, the content type;
    /// or why it failed.
    public struct Answer: Sendable {
        public var status: Int
        public var body: [UInt8]
        public var contentType: String
        public var failure: String?
    }

    func call(_ method: String, key: String, query: String = "", body: [UInt8]? = nil, headers extra: [String] = [])
        -> Answer
    {
        guard let base = location.url(key: key), let url = URL(string: base.absoluteString + query) else {
            return Answer(status: 0, body: [], contentType: "", failure: "the object's URL cannot be made")
        }
        let payload = body.map { Hex.string(SHA256.digest($0)) } ?? SigV4.emptyPayload
        let signed = access.signer.headers(method: method, url: url, date: Date(), payloadHash: payload)
        let t = client.request(
            method, url.absoluteString, headers: signed.map { "\($0.name): \($0.value)" } + extra, body: body,
            limits: limits)
        guard t.ok else {
            return Answer(
                status: t.status, body: [], contentType: "", failure: t.error.isEmpty ? "curl error \(t.code)" : t.error
            )
        }
        return Answer(status: t.status, body: t.body, contentType: t.contentType, failure: nil)
    }

    /// The object, or nil (a 404, or any failure, which `failed` says).
    public func get(_ key: String) -> (body: [UInt8], contentType: String)? {
        let a = call("GET", key: key)
        return a.status == 200 ? (a.body, a.contentType) : nil
    }

    /// Whether the object was written.
    public func put(_ key: String, _ body: [UInt8], contentType: String) -> Bool {
        call("PUT", key: key, body: body, headers: ["Content-Type: \(contentType)"]).status == 200
    }

    /// Deletes `keys` by DeleteObjects, a thousand to a request (S3's most); the keys it
    /// says it deleted (quiet mode: the answer lists only the errors).
    public func delete(_ keys: [String]) -> Set<String> {
        var deleted = Set<String>()
        for start in stride(from: 0, to: keys.count, by: 1000) {
            let batch = Array(keys[start..<min(keys.count, start + 1000)])
            var xml = "<Delete><Quiet>true</Quiet>"
            for k in batch { xml += "<Object><Key>\(Self.escaped(k))</Key></Object>" }
            xml += "</Delete>"
            let body = Array(xml.utf8)
            let md5 = Data(MD5.digest(body)).base64EncodedString()
            let a = call(
                "POST", key: "", query: "?delete=", body: body,
                headers: ["Content-MD5: \(md5)", "Content-Type: application/xml"])
            guard a.status == 200 else { continue }
            let failed = Set(Self.elements("Key", in: String(decoding: a.body, as: UTF8.self)))
            deleted.formUnion(batch.filter { !failed.contains($0) })
        }
        return deleted
    }

    /// XML's five predefined entities, for a key in a request body.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&apos;")
    }

    /// Every key under `prefix`, by ListObjectsV2 pages; nil when a page could not be had.
    public func list(prefix: String) -> [String]? {
        var keys: [String] = []
        var token: String?
        repeat {
            var query = "?list-type=2&prefix=" + PercentEncoding.encode(prefix, keeping: [])
            if let token { query += "&continuation-token=" + PercentEncoding.encode(token, keeping: []) }
            let a = call("GET", key: "", query: query)
            guard a.status == 200 else { return nil }
            let xml = String(decoding: a.body, as: UTF8.self)
            keys += Self.elements("Key", in: xml)
            token =
                xml.contains("<IsTruncated>true</IsTruncated>")
                ? Self.elements("NextContinuationToken", in: xml).first : nil
        } while token != nil
        return keys
    }

    /// The texts of every `<name>` element, entities undone (the five XML predefines).
    static func elements(_ name: String, in xml: String) -> [String] {
        var out: [String] = []
        var rest = xml[...]
        while let open = rest.range(of: "<\(name)>"),
            let close = rest.range(of: "</\(name)>", range: open.upperBound..<rest.endIndex)
        {
            out.append(
                String(rest[open.upperBound..<close.lowerBound]).replacingOccurrences(of: "&lt;", with: "<")
                    .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&quot;", with: "\"")
                    .replacingOccurrences(of: "&apos;", with: "'").replacingOccurrences(of: "&amp;", with: "&"))
            rest = rest[close.upperBound...]
        }
        return out
    }
}
