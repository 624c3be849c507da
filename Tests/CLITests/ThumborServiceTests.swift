import Foundation
import Imaging
import Signing
import TestSupport
import Testing
import Thumbor

/// thumbor's URL format through the real binary (SPEC: thumbor URLs; issue 40): signed as
/// thumbor signs, one cache entry with the native request it means, thumbor's sizes where
/// they differ, and the statuses of SPEC.
@Suite(.serialized) struct ThumborServiceTests {
    let dir: URL
    static let key = "MY_SECURE_KEY"

    init() throws {
        dir = try ServeProcess.sampleFolder("thumbor")
    }

    func serve(_ env: [String: String] = [:]) throws -> ServeProcess {
        try ServeProcess(
            samples: dir,
            env: ["ASPECT_THUMBOR_ENABLED": "true", "THUMBOR_SECURITY_KEY": Self.key].merging(env) { $1 })
    }

    /// thumbor's signature over the path after it (ThumborSigner, held to Python's hmac by
    /// ThumborSignerTests).
    static func signed(_ path: String) -> String {
        "/" + ThumborSigner(key: key).signature(path: Substring(path)) + "/" + path
    }

    func size(_ body: [UInt8]) throws -> (Int, Int) {
        let img = try ImageFile.decode(body)
        return (img.width, img.height)
    }

    @Test func aSignedURLIsTheNativeRequestItMeans() throws {
        let server = try serve()
        let path = Self.signed("300x300/landscape.jpg")
        let dialect = try ServiceTests.get(server.port, path)
        #expect(dialect.status == 200 && dialect.headers["content-type"] == "image/jpeg", "\(dialect.text)")
        #expect(try size(dialect.body) == (300, 300))
        #expect(dialect.headers["x-cache"] == "MISS")
        let native = try ServiceTests.get(
            server.port, "/thumb?src=landscape.jpg&w=300&h=300&mode=fill&upscale=1&format=jpeg")
        #expect(native.headers["x-cache"] == "HIT" && native.headers["etag"] == dialect.headers["etag"])
        #expect(native.body == dialect.body)
        let again = try ServiceTests.get(server.port, path)
        #expect(again.headers["x-cache"] == "HIT" && again.headers["etag"] == dialect.headers["etag"])
        let metrics = try ServiceTests.get(server.port, "/metrics").text
        #expect(metrics.contains(#"route="thumbor",status="200""#))
    }

    /// A wrong, unpadded or missing signature is a 403, as is `unsafe` once a key is set
    /// (thumbor's ALLOW_UNSAFE_URL), before the rest of the URL is read.
    @Test func signaturesAreChecked() throws {
        let server = try serve()
        let good = Self.signed("300x200/landscape.jpg")
        let unpadded = String(good.dropFirst().prefix(27))
        for bad in [
            good.replacingOccurrences(of: "300x200", with: "301x200"), "/unsafe/300x200/landscape.jpg",
            "/\(unpadded)/300x200/landscape.jpg", "/\(String(repeating: "A", count: 27))=/300x200/landscape.jpg",
            Self.signed("300x200/filters:nope()/landscape.jpg").replacingOccurrences(of: "nope", with: "nop"),
        ] {
            let r = try ServiceTests.get(server.port, bad)
            #expect(r.status == 403 && r.text.contains("bad_signature"), "\(bad): \(r.status) \(r.text)")
        }
        let metrics = try ServiceTests.get(server.port, "/metrics").text
        #expect(metrics.contains(#"route="thumbor",status="403""#))
    }

    /// With `thumbor.allowUnsafe`, `/unsafe/` is answered; an image outside the root is a
    /// 403, an unknown filter a 400 naming it (Aspect's JSON errors), a missing image a 404.
    @Test func unsafeURLsWhenAllowed() throws {
        let server = try serve(["ASPECT_THUMBOR_ALLOWUNSAFE": "true"])
        let ok = try ServiceTests.get(server.port, "/unsafe/fit-in/300x300/filters:fill(red)/landscape.jpg")
        #expect(ok.status == 200)
        #expect(try size(ok.body) == (300, 300))
        for outside in [
            "/unsafe/300x200/%2e%2e/secret.jpg", "/unsafe/300x200/%2Fetc%2Fpasswd", Self.signed("%2e%2e/x.jpg"),
        ] {
            let r = try ServiceTests.get(server.port, outside)
            #expect(r.status == 403 && r.text.contains("forbidden_path"), "\(outside): \(r.text)")
        }
        let filter = try ServiceTests.get(server.port, "/unsafe/300x200/filters:sharpen(1,1,true)/landscape.jpg")
        #expect(filter.status == 400 && filter.text.contains("sharpen"))
        #expect(try ServiceTests.get(server.port, "/unsafe/300x200/nothing-here.jpg").status == 404)
    }

    /// Where thumbor's sizes differ from the native API's: `WxH` enlarges, `full-fit-in`
    /// covers the box, `rotate(90)` turns left, `proportion` scales the result.
    @Test func thumborsOwnSizes() throws {
        let server = try serve(["ASPECT_THUMBOR_ALLOWUNSAFE": "true"])
        let original = try size(try ServiceTests.get(server.port, "/unsafe/landscape.jpg").body)
        let (w, h) = original
        let cases: [(String, (Int, Int))] = [
            ("/unsafe/\(w * 3 / 2)x\(h)/landscape.jpg", (w * 3 / 2, h)),
            ("/unsafe/full-fit-in/300x300/landscape.jpg", (Int((300.0 * Double(w) / Double(h)).rounded()), 300)),
            ("/unsafe/300x200/filters:rotate(90)/landscape.jpg", (200, 300)),
            ("/unsafe/300x200/filters:proportion(0.5)/landscape.jpg", (150, 100)),
        ]
        for (path, expected) in cases {
            let r = try ServiceTests.get(server.port, path)
            #expect(r.status == 200, "\(path): \(r.text)")
            #expect(try size(r.body) == expected, "\(path)")
        }
    }

    /// The filters the pipeline draws: `fill` with a colour, `auto` (the mean colour) and
    /// `blur` around a fitted picture, `grayscale`, `background_color` flattening a
    /// transparent source, `round_corner` in its colour, and `max_bytes` that cannot be
    /// met giving the answer at the asked quality.
    @Test func filtersDrawWhatTheySay() throws {
        let server = try serve(["ASPECT_THUMBOR_ALLOWUNSAFE": "true"])
        func picture(_ path: String) throws -> RawImage {
            let r = try ServiceTests.get(server.port, path)
            guard r.status == 200 else { throw TestError("\(path): \(r.status) \(r.text)") }
            return try ImageFile.decode(r.body)
        }
        // landscape.jpg is 3:2: fitted into a square, bars above and below.
        let red = try picture("/unsafe/fit-in/300x300/filters:fill(ff0000):format(png)/landscape.jpg")
        #expect(red.width == 300 && red.height == 300 && red.pixel(150, 2).prefix(3) == [255, 0, 0])
        let mean = try picture("/unsafe/fit-in/300x300/filters:fill(auto):format(png)/landscape.jpg")
        let bar = mean.pixel(0, 0)
        #expect(mean.pixel(299, 299) == bar && mean.pixel(150, 0) == bar, "one colour all round")
        let blurred = try picture("/unsafe/fit-in/300x300/filters:fill(blur):format(png)/landscape.jpg")
        #expect(blurred.pixel(0, 0) != blurred.pixel(299, 0) || blurred.pixel(0, 0) != blurred.pixel(0, 299))
        let grey = try picture("/unsafe/200x200/filters:grayscale():format(png)/landscape.jpg")
        for (x, y) in [(10, 10), (100, 100), (190, 150)] {
            let p = grey.pixel(x, y)
            #expect(p.count < 3 || (p[0] == p[1] && p[1] == p[2]), "grey at \(x),\(y): \(p)")
        }
        // logo.png is transparent round its mark: background_color makes it opaque.
        let flat = try picture("/unsafe/100x100/filters:background_color(00ff00)/logo.png")
        #expect(flat.bands == 3 || flat.pixel(0, 0).last == 255)
        #expect(flat.pixel(0, 0).prefix(3) == [0, 255, 0])
        let corners = try picture("/unsafe/200x200/filters:round_corner(40,0,0,255):format(png)/landscape.jpg")
        #expect(corners.pixel(0, 0).prefix(3) == [0, 0, 255] && corners.pixel(100, 100).prefix(3) != [0, 0, 255])
        let plain = try ServiceTests.get(server.port, "/unsafe/300x200/filters:quality(80)/landscape.jpg")
        let unmet = try ServiceTests.get(
            server.port, "/unsafe/300x200/filters:quality(80):max_bytes(100)/landscape.jpg")
        #expect(unmet.status == 200 && unmet.body.count == plain.body.count, "no quality meets 100 bytes")
    }
}
