import Configuration
import Foundation
import S3

/// Where a bucket is and how requests to it are signed, from `s3.*`: the one place for
/// the region's default and the credentials, for the S3 source and the shared tier.
public struct S3Access: Sendable {
    public let location: S3Location
    public let signer: SigV4

    /// S3's own default region when none is set.
    public static let defaultRegion = "us-east-1"

    public init(bucket: String, s3: Config.S3) {
        let region = s3.region.isEmpty ? Self.defaultRegion : s3.region
        location = S3Location(endpoint: s3.endpoint, bucket: bucket, region: region, pathStyle: s3.pathStyle)
        signer = SigV4(
            credentials: .init(
                accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey,
                sessionToken: s3.sessionToken.isEmpty ? nil : s3.sessionToken),
            region: region)
    }
}

extension CurlClient.Limits {
    /// `sources.*`'s timeouts and CA bundle, with a size bound.
    public init(_ sources: Config.Sources, maxBytes: Int64) {
        self.init(
            maxBytes: maxBytes, connectTimeoutMs: sources.connectTimeoutMs, timeoutMs: sources.timeoutMs,
            caFile: sources.caFile)
    }
}
