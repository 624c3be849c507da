import Core
import Foundation
import Glibc
import TestSupport
import Testing

/// `aspect serve` with `images.root = s3://…` against moto's S3 server on loopback, which
/// checks every request's Signature V4: the real binary, libcurl, our signer, libvips.
@Suite(.serialized) struct S3BucketTests {
    let dir: URL
    let moto: MotoServer
    let samples: [String: [UInt8]]

    init() throws {
        moto = try MotoServer.shared.get()
        dir = try ServeProcess.sampleFolder("s3")
        var samples: [String: [UInt8]] = [:]
        for name in ["landscape.jpg", "portrait.jpg", "logo.png"] {
            samples[name] = try [UInt8](Data(contentsOf: dir.appendingPathComponent("images/\(name)")))
        }
        self.samples = samples
    }

    func serve(_ env: [String: String] = [:], prefix: String = "photos") throws -> ServeProcess {
        try ServeProcess(
            dir: dir,
            // The keys as the standard AWS variables: what every S3 tool reads, and Aspect too.
            env: moto.clientEnvironment.merging([
                "ASPECT_IMAGES_ROOT": "s3://\(moto.bucket)/\(prefix)", "ASPECT_CACHE_DIR": "cache-\(UUID().uuidString)",
                "AWS_SESSION_TOKEN": "", "AWS_ENDPOINT_URL": "", "AWS_REGION": "", "AWS_DEFAULT_REGION": "",
            ]) { $1 }.merging(env) { $1 })
    }

    /// The access log and the event log, once the server has stopped.
    static func logs(_ s: ServeProcess) -> String {
        s.signal(SIGTERM)
        _ = s.wait(seconds: 10)
        return s.output + s.errors
    }

    @Test func everyModeFromABucketAsFromAFolder() throws {
        for (name, bytes) in samples { try moto.put("photos/\(name)", bytes) }
        let s = try serve()
        let local = try ServeProcess(samples: dir, env: ["ASPECT_CACHE_DIR": "cache-local"])
        for src in samples.keys.sorted() {
            for mode in Mode.allCases {
                let target = "/thumb?src=\(src)&w=120&ratio=4:3&mode=\(mode.rawValue)&format=webp"
                let r = try ServiceTests.get(s.port, target)
                #expect(r.status == 200, "\(target): \(r.text)")
                #expect(
                    r.body == (try ServiceTests.get(local.port, target)).body, "\(target): differs from the folder's")
            }
        }
        let metrics = try ServiceTests.get(s.port, "/metrics").text
        #expect(metrics.contains(#"aspect_source_fetches_total{outcome="downloaded"} 3"#), "one download each")
    }

    /// Keys that need encoding: a space, unicode, '+', under a prefix; and the same object
    /// by virtual-hosted URL (the bucket in the host name), which reaches moto through a
    /// proxy since `aspect-test.localhost` resolves nowhere here.
    @Test func keysThatNeedEncodingInBothStyles() throws {
        let key = "photos/a b/ü+x (1).jpg"
        try moto.put(key, samples["portrait.jpg"] ?? [])
        let target =
            "/thumb?src=\(PercentEncoding.encode("a b/ü+x (1).jpg").replacingOccurrences(of: "%2F", with: "/"))&w=90"
        let path = try serve()
        let byPath = try ServiceTests.get(path.port, target)
        #expect(byPath.status == 200, "\(byPath.text)")
        let hosted = try serve([
            "ASPECT_S3_PATHSTYLE": "false", "ASPECT_S3_ENDPOINT": "http://localhost:\(moto.port)",
            "http_proxy": moto.endpoint,
        ])
        let byHost = try ServiceTests.get(hosted.port, target)
        #expect(byHost.status == 200 && byHost.body == byPath.body, "\(byHost.text)")
        #expect(MotoServer.read(moto.log).contains("GET http://\(moto.bucket).localhost:\(moto.port)/photos/a%20b/"))
    }

    @Test func aMissingKeyIs404() throws {
        let s = try serve()
        let r = try ServiceTests.get(s.port, "/thumb?src=no/such.jpg&w=100")
        #expect(r.status == 404 && r.text.contains("no such source image: no/such.jpg"), "\(r.text)")
    }

    /// Wrong credentials are a 502 for the client, and the log says which S3 error it was
    /// and what to check; the secret is never in either.
    @Test func wrongCredentialsAre502AndTheLogSaysWhich() throws {
        try moto.put("photos/landscape.jpg", samples["landscape.jpg"] ?? [])
        let secret = "not-the-secret-0123456789"
        let cases = [
            (["AWS_SECRET_ACCESS_KEY": secret], "SignatureDoesNotMatch", "check s3.secretAccessKey"),
            (["AWS_ACCESS_KEY_ID": "AKIANOSUCHKEY0000000"], "InvalidAccessKeyId", "check s3.accessKeyId"),
        ]
        for (env, code, hint) in cases {
            let s = try serve(env.merging(["ASPECT_LOG_ACCESS": "true"]) { $1 })
            let r = try ServiceTests.get(s.port, "/thumb?src=landscape.jpg&w=100")
            #expect(r.status == 502 && r.text.contains("the origin answered 403"), "\(r.text)")
            #expect(!r.text.contains(code), "the client is not told the S3 error's details")
            let logs = Self.logs(s)
            #expect(logs.contains(code) && logs.contains(hint), "\(logs)")
            #expect(!logs.contains(secret) && !logs.contains(moto.secretAccessKey))
        }
    }

    /// An object replaced in the bucket: the old one within sources.revalidateSeconds, the
    /// new one (a new ETag, a new result) once a check is due (with sources.staleSeconds 0,
    /// the request waits for it): the window is an hour, then the same source cache under a
    /// server whose every request is due a check. RemoteSourceTests moves a test clock
    /// through the window itself.
    @Test func aReplacedObjectIsServedNewAfterTheWindow() throws {
        try moto.put("photos/swap.jpg", samples["landscape.jpg"] ?? [])
        let cache = "cache-swap-\(UUID().uuidString)"
        let within = try serve([
            "ASPECT_SOURCES_REVALIDATESECONDS": "3600", "ASPECT_SOURCES_STALESECONDS": "0", "ASPECT_CACHE_DIR": cache,
        ])
        let first = try ServiceTests.get(within.port, "/thumb?src=swap.jpg&w=90")
        try moto.put("photos/swap.jpg", samples["portrait.jpg"] ?? [])
        let kept = try ServiceTests.get(within.port, "/thumb?src=swap.jpg&w=90")
        #expect(kept.headers["etag"] == first.headers["etag"])
        within.signal(SIGTERM)
        _ = within.wait(seconds: 10)
        // The same source cache, every request due a check: the new object.
        let s = try serve([
            "ASPECT_SOURCES_REVALIDATESECONDS": "0", "ASPECT_SOURCES_STALESECONDS": "0", "ASPECT_CACHE_DIR": cache,
        ])
        let after = try ServiceTests.get(s.port, "/thumb?src=swap.jpg&w=90")
        #expect(after.status == 200 && after.headers["etag"] != first.headers["etag"] && after.body != first.body)
    }
}
