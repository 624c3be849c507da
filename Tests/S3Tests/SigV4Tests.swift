import Foundation
import TestSupport
import Testing

@testable import S3

/// Tests/Fixtures/sigv4-vectors.json: S3 GETs signed by botocore at a fixed time
/// (Tests/Fixtures/make-sigv4-vectors.sh). The URL built from the same bucket and key, and every
/// header of the signature, must be botocore's to the byte.
@Suite struct SigV4Tests {
    struct Vector: Decodable, Sendable, CustomTestStringConvertible {
        let endpoint: String
        let pathStyle: Bool
        let bucket: String
        let key: String
        let region: String
        let accessKeyId: String
        let secretAccessKey: String
        let sessionToken: String?
        let url: String
        let amzDate: String
        let contentSHA256: String
        let authorization: String
        var testDescription: String { key }
    }

    static let vectors: [Vector] = {
        struct Document: Decodable { let vectors: [Vector] }
        return fixture("sigv4-vectors.json", as: Document.self)?.vectors ?? []
    }()

    @Test func theFixtureIsThere() {
        #expect(Self.vectors.count >= 4)
    }

    @Test(arguments: vectors)
    func signedAsBotocoreSignsIt(_ v: Vector) throws {
        let location = S3Location(endpoint: v.endpoint, bucket: v.bucket, region: v.region, pathStyle: v.pathStyle)
        let url = try #require(location.url(key: v.key))
        #expect(url.absoluteString == v.url)
        let signer = SigV4(
            credentials: .init(
                accessKeyId: v.accessKeyId, secretAccessKey: v.secretAccessKey, sessionToken: v.sessionToken),
            region: v.region)
        // 2026-12-03T10:04:05Z, the vectors' time.
        let headers = signer.headers(url: url, date: Date(timeIntervalSince1970: 1_796_292_245))
        let byName = Dictionary(uniqueKeysWithValues: headers.map { ($0.name, $0.value) })
        #expect(byName["X-Amz-Date"] == v.amzDate)
        #expect(byName["X-Amz-Content-SHA256"] == v.contentSHA256)
        #expect(byName["X-Amz-Security-Token"] == v.sessionToken)
        #expect(byName["Authorization"] == v.authorization)
    }
}
