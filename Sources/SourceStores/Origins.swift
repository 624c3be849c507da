import Configuration
import Core
import Foundation
import Remote
import S3

/// An HTTP(S) origin: `src` appended to the base URL, each segment percent-encoded.
public struct HTTPOrigin: Origin {
    public let base: String

    public init(base: String) { self.base = base }

    public var name: String { base }

    public func request(_ src: String) -> (url: String, headers: [String])? {
        (SourceRoot.url(base: base, src: src), [])
    }

    public func explain(status: Int, body: String) -> String { "the origin answered \(status)" }
}

/// An S3-compatible bucket: the object `prefix + src`, by GET signed with AWS Signature V4.
public struct S3Origin: Origin {
    public let access: S3Access
    public var location: S3Location { access.location }
    public let prefix: String

    public init(bucket: String, prefix: String, s3: Config.S3) {
        access = S3Access(bucket: bucket, s3: s3)
        self.prefix = prefix
    }

    public var name: String {
        "s3://\(location.bucket)/\(prefix) at \(location.endpoint.isEmpty ? "AWS \(location.region)" : location.endpoint)"
    }

    public func request(_ src: String) -> (url: String, headers: [String])? {
        guard let url = location.url(key: prefix + src) else { return nil }
        let signed = access.signer.headers(url: url, date: Date())
        // libcurl sends Host itself, from the URL: the same value as signed.
        return (url.absoluteString, signed.filter { $0.name.lowercased() != "host" }.map { "\($0.name): \($0.value)" })
    }

    /// S3's error document names what went wrong (`<Code>SignatureDoesNotMatch</Code>`):
    /// the log line says it, and what an operator does about it.
    public func explain(status: Int, body: String) -> String {
        let code = Self.element("Code", in: body)
        let message = Self.element("Message", in: body)
        let hint: String
        switch code {
        case "SignatureDoesNotMatch": hint = "; check s3.secretAccessKey"
        case "InvalidAccessKeyId": hint = "; check s3.accessKeyId"
        case "AccessDenied": hint = "; the credentials may not read this bucket or key"
        case "AuthorizationHeaderMalformed", "PermanentRedirect", "IllegalLocationConstraintException":
            hint = "; check s3.region (and s3.endpoint)"
        case "NoSuchBucket": hint = "; check the bucket in images.root"
        case "ExpiredToken", "InvalidToken": hint = "; the s3.sessionToken has expired or is wrong"
        default: hint = ""
        }
        guard let code else { return "S3 answered \(status)" }
        return "S3 answered \(status) \(code)" + (message.map { ": \($0)" } ?? "") + hint
    }

    static func element(_ name: String, in xml: String) -> String? {
        guard let open = xml.range(of: "<\(name)>"),
            let close = xml.range(of: "</\(name)>", range: open.upperBound..<xml.endIndex)
        else { return nil }
        return String(xml[open.upperBound..<close.lowerBound])
    }
}
