import Foundation
import Glibc
import Imaging
import Synchronization
import TestSupport
import Testing

/// The fallback image through the binary (SPEC: imgproxy URLs; issue 45): a missing and a
/// damaged source answered with it, processed with the request's options, its status and
/// max-age, `X-Fallback: 1`, counted; the real picture once the source appears; the data
/// form as imgproxy's variable; nothing changed without the key.
@Suite(.serialized) struct FallbackTests {
    let dir: URL
    var images: URL { dir.appendingPathComponent("images") }

    init() throws {
        dir = try ServeProcess.sampleFolder("fallback")
        let whole = try Data(contentsOf: images.appendingPathComponent("landscape.jpg"))
        try whole.prefix(2000).write(to: images.appendingPathComponent("damaged.jpg"))
    }

    func size(_ body: [UInt8]) throws -> (Int, Int) {
        let img = try ImageFile.decode(body)
        return (img.width, img.height)
    }

    @Test func aMissingOrDamagedSourceGetsTheFallback() throws {
        let server = try ServeProcess(samples: dir, env: ["ASPECT_IMAGES_FALLBACK": "logo.png"])
        for src in ["missing.jpg", "damaged.jpg"] {
            let r = try ServiceTests.get(server.port, "/thumb?src=\(src)&w=100&format=png")
            #expect(r.status == 200 && r.headers["x-fallback"] == "1", "\(src): \(r.status) \(r.text.prefix(200))")
            #expect(r.headers["cache-control"] == "public, max-age=60")
            #expect(try size(r.body) == (100, 100), "logo.png (square) at the request's width")
        }
        let metrics = try ServiceTests.get(server.port, "/metrics").text
        #expect(metrics.contains("aspect_fallbacks_total 2"))
        // The source appears: the real picture, not the fallback.
        try FileManager.default.copyItem(
            at: images.appendingPathComponent("landscape.jpg"), to: images.appendingPathComponent("missing.jpg"))
        var real = try ServiceTests.get(server.port, "/thumb?src=missing.jpg&w=100&format=png")
        for _ in 0..<40 where real.headers["x-fallback"] != nil {
            usleep(100_000)
            real = try ServiceTests.get(server.port, "/thumb?src=missing.jpg&w=100&format=png")
        }
        #expect(real.status == 200 && real.headers["x-fallback"] == nil)
        #expect(try size(real.body) == (100, 67))
        // Other errors stay errors.
        #expect(try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&w=abc").status == 400)
        #expect(try ServiceTests.get(server.port, "/thumb?src=../x.jpg&w=10").status == 403)
    }

    @Test func statusZeroKeepsTheErrorsOwnAndTheDataFormIsImgproxys() throws {
        let logo = try Data(contentsOf: images.appendingPathComponent("logo.png")).base64EncodedString()
        let server = try ServeProcess(
            samples: dir,
            env: [
                "ASPECT_IMGPROXY_ENABLED": "true", "IMGPROXY_FALLBACK_IMAGE_DATA": logo,
                "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE": "0", "IMGPROXY_FALLBACK_IMAGE_TTL": "30",
            ])
        let r = try ServiceTests.get(server.port, "/insecure/rs:fit:50:50/plain/missing.jpg@png")
        #expect(r.status == 404 && r.headers["x-fallback"] == "1" && r.headers["cache-control"] == "public, max-age=30")
        #expect(try size(r.body) == (50, 50))
        let damaged = try ServiceTests.get(server.port, "/thumb?src=damaged.jpg&w=40&format=png")
        #expect(damaged.status == 415 && damaged.headers["x-fallback"] == "1")
    }

    /// A decode that kills its render worker (the worker stopped while it holds the render,
    /// then SIGSEGV, as IsolationTests does): the fallback, from a new worker; the source,
    /// refused for a while after the crash, gets it again without another crash.
    @Test func aDecodeThatCrashesItsWorkerGetsTheFallback() throws {
        let server = try ServeProcess(
            samples: dir,
            env: [
                "ASPECT_IMAGES_FALLBACK": "logo.png", "ASPECT_SERVER_WORKERS": "2", "TESTHOOK_ASPECT_ATTACKS": "1",
            ])
        let port = server.port
        // A source that crashes every worker that decodes it (the debug build's test hook):
        // the first and the fresh one it is tried again in.
        try Data("ASPECT-ATTACK crash\n".utf8).write(to: dir.appendingPathComponent("images/crash.jpg"))
        let target = "/thumb?src=crash.jpg&w=120&format=png"
        let crashed = try ServiceTests.get(port, target)
        #expect(crashed.status == 200 && crashed.headers["x-fallback"] == "1", "\(crashed.status) \(crashed.text)")
        #expect(try size(crashed.body) == (120, 120), "logo.png at the request's width")
        #expect(try IsolationTests.restarts(server, "signal") == 2)
        // Refused at once now (no worker tried): the fallback again.
        let again = try ServiceTests.get(port, target)
        #expect(again.status == 200 && again.headers["x-fallback"] == "1" && again.body == crashed.body)
        #expect(try IsolationTests.restarts(server, "signal") == 2)
        let metrics = try ServiceTests.get(port, "/metrics").text
        #expect(metrics.contains("aspect_fallbacks_total 2"), "\(metrics)")
    }

    @Test func withoutTheKeyErrorsStay() throws {
        let server = try ServeProcess(samples: dir)
        let r = try ServiceTests.get(server.port, "/thumb?src=missing.jpg&w=100")
        #expect(r.status == 404 && r.headers["x-fallback"] == nil && r.text.contains("not_found"))
    }
}
