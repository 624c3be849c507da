import Configuration
import Core
import Foundation
import Testing

@testable import SourceStores

/// What the log says of S3's error documents: the code, S3's words, and what to check.
/// The documents are AWS's own shapes (moto answers the first two the same way in the
/// bucket tests; a wrong region is AWS's answer, which moto does not give).
@Suite struct S3OriginTests {
    let origin = S3Origin(bucket: "photos", prefix: "", s3: Config().s3)

    @Test func eachErrorSaysWhatToCheck() {
        let cases = [
            (403, "SignatureDoesNotMatch", "check s3.secretAccessKey"),
            (403, "InvalidAccessKeyId", "check s3.accessKeyId"),
            (403, "AccessDenied", "may not read this bucket or key"),
            (400, "AuthorizationHeaderMalformed", "check s3.region"),
            (301, "PermanentRedirect", "check s3.region"),
            (404, "NoSuchBucket", "check the bucket in images.root"),
            (400, "ExpiredToken", "s3.sessionToken"),
        ]
        for (status, code, hint) in cases {
            let body = """
                <?xml version="1.0" encoding="UTF-8"?>
                <Error><Code>\(code)</Code><Message>S3 says so</Message><RequestId>1</RequestId></Error>
                """
            let line = origin.explain(status: status, body: body)
            #expect(line.hasPrefix("S3 answered \(status) \(code): S3 says so; ") && line.contains(hint), "\(line)")
        }
        #expect(origin.explain(status: 503, body: "") == "S3 answered 503")
    }

    /// The region defaults to us-east-1; AWS's endpoint is virtual hosted.
    @Test func defaultsAreAWSs() throws {
        let request = try #require(origin.request("a b.jpg"))
        #expect(request.url == "https://photos.s3.us-east-1.amazonaws.com/a%20b.jpg")
        #expect(request.headers.contains { $0.hasPrefix("Authorization: AWS4-HMAC-SHA256 Credential=/") })
        #expect(!request.headers.contains { $0.lowercased().hasPrefix("host:") }, "libcurl sends Host from the URL")
    }
}
