import CCurl
import Configuration
import Core
import Foundation
import Hashing
import S3
import Synchronization

/// The few S3 calls the shared result tier makes (GET, PUT, ListObjectsV2, DeleteObjects), each a
/// whole request in memory through libcurl, signed by the same SigV4 as the S3 source.
public final class S3Bucket: Sendable {
    public let location: S3Location
    let signer: SigV4
    let connectTimeoutMs: Int
    let timeoutMs: Int
    let caFile: String
    /// Results larger than this are not fetched whole (the local cache's own bound).
    let maxBytes: Int64

    struct Handle: @unchecked Sendable { let pointer: UnsafeMutableRawPointer }
    private let handles = Mutex<[Handle]>([])

    public init(bucket: String, s3: Config.S3, sources: Config.Sources, maxBytes: Int64) {
        let region = s3.region.isEmpty ? "us-east-1" : s3.region
        location = S3Location(endpoint: s3.endpoint, bucket: bucket, region: region, pathStyle: s3.pathStyle)
        signer = SigV4(
            credentials: .init(
                accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey,
                sessionToken: s3.sessionToken.isEmpty ? nil : s3.sessionToken),
            region: region)
        connectTimeoutMs = sources.connectTimeoutMs
        timeoutMs = sources.timeoutMs
        caFile = sources.caFile
        self.maxBytes = maxBytes
    }

    deinit {
        for h in handles.withLock({ $0 }) { ccurl_free(h.pointer) }
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
        let signed = signer.headers(method: method, url: url, date: Date(), payloadHash: payload)
        let lines = signed.map { "\($0.name): \($0.value)" } + extra
        guard let handle = handles.withLock({ $0.popLast() }) ?? ccurl_new().map(Handle.init)
        else { return Answer(status: 0, body: [], contentType: "", failure: "curl_easy_init failed") }
        defer { handles.withLock { $0.append(handle) } }
        var result = ccurl_result()
        var response: UnsafeMutablePointer<UInt8>?
        var length = 0
        let cStrings = lines.map { strdup($0) }
        defer { for c in cStrings { free(c) } }
        var pointers: [UnsafePointer<CChar>?] = cStrings.map { UnsafePointer($0) }
        let send: (UnsafeRawPointer?, Int) -> Void = { data, count in
            ccurl_request(
                handle.pointer, method, url.absoluteString, &pointers, Int32(pointers.count), data,
                count, self.maxBytes, self.connectTimeoutMs, self.timeoutMs, self.caFile, &response, &length, &result)
        }
        if let body {
            body.withUnsafeBytes { send($0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), $0.count) }
        } else {
            send(nil, 0)
        }
        defer { free(response) }
        let bytes = response.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? []
        let contentType = withUnsafeBytes(of: &result.content_type) {
            String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
        }
        guard result.code == CURLE_OK.rawValue else {
            let why = withUnsafeBytes(of: &result.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            return Answer(
                status: Int(result.status), body: [], contentType: "",
                failure: why.isEmpty ? "curl error \(result.code)" : why)
        }
        return Answer(status: Int(result.status), body: bytes, contentType: contentType, failure: nil)
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
