import Foundation
import Imaging
import Imgproxy
import Signing
import TestSupport
import Testing

/// imgproxy's URL format through the real binary (SPEC: imgproxy URLs): signed as imgproxy
/// signs, one cache entry with the native request it means, imgproxy's sizes where they
/// differ, its headers, and the statuses of SPEC.
@Suite(.serialized) struct ImgproxyServiceTests {
    let dir: URL
    // The imgproxy docs' signing example: key "secret", salt "hello", in hex.
    static let key = "736563726574"
    static let salt = "68656C6C6F"

    init() throws {
        dir = try ServeProcess.sampleFolder("imgproxy")
    }

    func serve(_ env: [String: String] = [:]) throws -> ServeProcess {
        try ServeProcess(
            samples: dir,
            env: [
                "ASPECT_IMGPROXY_ENABLED": "true", "ASPECT_IMGPROXY_KEY": Self.key, "ASPECT_IMGPROXY_SALT": Self.salt,
            ]
            .merging(env) { $1 })
    }

    /// imgproxy's signature (ImgproxySigner, held to the docs' example by SigningTests).
    static func signed(_ path: String, size: Int = 32) throws -> String {
        guard let signer = ImgproxySigner(keyHex: key, saltHex: salt, size: size) else { throw TestError("not hex") }
        return "/" + signer.signature(path: path) + path
    }

    func size(_ body: [UInt8]) throws -> (Int, Int) {
        let img = try ImageFile.decode(body)
        return (img.width, img.height)
    }

    /// The URLs that killed the whole service (issue 50: a crop size past Int.max trapped
    /// converting to an Int, in the service process): each a 400 naming the crop, with no
    /// key configured (imgproxy's default, so anyone can send them), and the service
    /// alive after them, answering the next request.
    @Test func hugeNumbersAreA400AndTheServiceLives() throws {
        let server = try ServeProcess(samples: dir, env: ["ASPECT_IMGPROXY_ENABLED": "true"])
        for options in [
            "c:200:99999999999999999999999:ce", "c:1e308:1e308", "c:9223372036854775807:100", "c:200:1e308:ce",
            "rs:fill:100:100/g:ce:1e300:0", "w:100/z:1e300", "el:1/z:1e300",
        ] {
            let r = try ServiceTests.get(server.port, "/insecure/\(options)/plain/landscape.jpg")
            // The last option's the one past every bound: the answer names it.
            let named = options.split(separator: "/").last.map { "'" + $0.prefix { $0 != ":" } + ":" } ?? options
            #expect(r.status == 400 && r.text.contains(named), "\(options): \(r.status) \(r.text)")
        }
        let after = try ServiceTests.get(server.port, "/insecure/rs:fit:64:64/plain/landscape.jpg")
        let (w, h) = try size(after.body)
        #expect(after.status == 200 && w == 64 && h == 43)
        #expect(try ServiceTests.get(server.port, "/healthz").status == 200)
    }

    @Test func aSignedURLIsTheNativeRequestItMeans() throws {
        let server = try serve()
        let path = try Self.signed("/rs:fill:300:200:1/g:soea/plain/landscape.jpg@webp")
        let dialect = try ServiceTests.get(server.port, path)
        #expect(dialect.status == 200 && dialect.headers["content-type"] == "image/webp", "\(dialect.text)")
        #expect(dialect.headers["content-disposition"] == #"inline; filename="landscape.webp""#)
        #expect(try size(dialect.body) == (300, 200))
        let native = try ServiceTests.get(
            server.port, "/thumb?src=landscape.jpg&w=300&h=200&mode=fill&gravity=southeast&upscale=1&format=webp")
        #expect(native.headers["x-cache"] == "HIT" && native.headers["etag"] == dialect.headers["etag"])
        #expect(native.body == dialect.body)
        // The signature is checked: another one, none, or a changed path is a 403.
        for bad in [path.replacingOccurrences(of: "300", with: "301"), "/insecure/rs:fit:100:100/plain/landscape.jpg"] {
            let r = try ServiceTests.get(server.port, bad)
            #expect(r.status == 403 && r.text.contains("bad_signature"), "\(bad)")
        }
        let metrics = try ServiceTests.get(server.port, "/metrics").text
        #expect(
            metrics.contains(#"route="imgproxy",status="200""#) && metrics.contains(#"route="imgproxy",status="403""#))
    }

    /// imgproxy's `fill` without `enlarge` on a source smaller than the box: the source's
    /// size, not the box's ratio (its `TestResizeToFill`); `fill-down` keeps the ratio.
    @Test func imgproxysOwnSizesWhereTheyDiffer() throws {
        let server = try serve()
        let fill = try ServiceTests.get(server.port, try Self.signed("/rs:fill:3000:1000/plain/landscape.jpg@png"))
        #expect(fill.status == 200)
        #expect(try size(fill.body) == (2400, 1000))
        let down = try ServiceTests.get(server.port, try Self.signed("/rs:fill-down:3000:1000/plain/landscape.jpg@png"))
        #expect(try size(down.body) == (2400, 800))
        // extend, padding (× dpr) and a crop in pixels.
        let extended = try ServiceTests.get(
            server.port, try Self.signed("/rs:fit:300:300/ex:1/pd:10:20/dpr:2/plain/landscape.jpg@png"))
        #expect(try size(extended.body) == (680, 640))
        let cropped = try ServiceTests.get(
            server.port, try Self.signed("/c:600:400:nowe/w:300/plain/landscape.jpg@png"))
        #expect(try size(cropped.body) == (300, 200))
    }

    /// What a switched site would see first (issue 35): escaped file names signed as
    /// sent and decoded once, imgproxy's width to the pixel after JPEG shrink-on-load, the
    /// source's format kept, imgproxy's arguments accepted, and one entry and one ETag
    /// with the native request a URL means.
    @Test func aSwitchedSiteDoesNotNotice() throws {
        let images = dir.appendingPathComponent("images")
        let landscape = images.appendingPathComponent("landscape.jpg")
        try FileManager.default.createDirectory(
            at: images.appendingPathComponent("sub/dir"), withIntermediateDirectories: true)
        for name in ["sub/dir/x y.jpg", "a%41.jpg", "caf\u{e9}.jpg"] {
            try? FileManager.default.copyItem(at: landscape, to: images.appendingPathComponent(name))
        }
        let land = try Binary.run([
            "thumb", landscape.path, images.appendingPathComponent("land.jpg").path, "--w", "640",
        ])
        #expect(land.status == 0, "\(land.stderr)")
        let server = try serve()

        // Signed over the path as sent: a space, a percent sign, a non-ASCII letter.
        for path in ["/w:50/plain/sub/dir/x%20y.jpg", "/w:50/plain/a%2541.jpg", "/w:50/plain/caf%C3%A9.jpg"] {
            let r = try ServiceTests.get(server.port, try Self.signed(path))
            #expect(r.status == 200, "\(path): \(r.text)")
        }
        // a%2541.jpg is the file "a%41.jpg" (decoded once): the native request for it.
        let once = try ServiceTests.get(server.port, try Self.signed("/w:50/plain/a%2541.jpg"))
        let native = try ServiceTests.get(server.port, "/thumb?src=a%2541.jpg&w=50&format=jpeg")
        #expect(native.headers["etag"] == once.headers["etag"] && native.headers["x-cache"] == "HIT")

        // 640×427 at w:50 is 50×33, as imgproxy answers (and as /thumb?w=50 does).
        let fifty = try ServiceTests.get(server.port, try Self.signed("/w:50/plain/land.jpg"))
        #expect(try size(fifty.body) == (50, 33) && fifty.headers["content-type"] == "image/jpeg")
        #expect(try size(try ServiceTests.get(server.port, "/thumb?src=land.jpg&w=50").body) == (50, 33))

        // No format keeps the source's: a PNG stays a PNG, a WebP becomes a JPEG, and
        // nothing varies on Accept.
        let png = try ServiceTests.get(server.port, try Self.signed("/w:60/plain/logo.png"))
        #expect(png.headers["content-type"] == "image/png" && png.headers["vary"] == nil)
        let webp = try ServiceTests.get(
            server.port, try Self.signed("/w:60/plain/square.webp"), headers: ["Accept": "image/webp"])
        #expect(webp.headers["content-type"] == "image/jpeg")

        // imgproxy's own arguments, no longer 400s.
        for options in ["t:150", "trim:1:ff0000", "t:10:ffffff:1:0", "ar:0", "kcr:1"] {
            let r = try ServiceTests.get(server.port, try Self.signed("/\(options)/w:80/plain/portrait.jpg"))
            #expect(r.status == 200, "\(options): \(r.text)")
        }
        // ar:0: the portrait as stored (landscape), not upright.
        let stored = try ServiceTests.get(server.port, try Self.signed("/ar:0/w:80/plain/portrait.jpg"))
        let upright = try ServiceTests.get(server.port, try Self.signed("/w:80/plain/portrait.jpg"))
        let (sw, sh) = try size(stored.body)
        let (uw, uh) = try size(upright.body)
        #expect(sw > sh && uh > uw, "stored \(sw)×\(sh), upright \(uw)×\(uh)")

        // One request, one entry, one ETag.
        for (dialect, query) in [
            ("rs:fill:300:225/g:ce/plain/landscape.jpg@jpg", "w=300&h=225&mode=fill&format=jpeg"),
            ("rs:force:300:225/plain/landscape.jpg", "w=300&h=225&mode=stretch&format=jpeg"),
            ("rs:fill:300:225/g:nowe/plain/landscape.jpg", "w=300&h=225&mode=fill&gravity=northwest&format=jpeg"),
            (
                "rs:fill:300:225/g:fp:0.3:0.6/plain/landscape.jpg",
                "w=300&h=225&mode=fill&gravity=focus&fx=0.3&fy=0.6&format=jpeg"
            ),
            ("rs:fill:300:225/g:sm/plain/landscape.jpg", "w=300&h=225&mode=fill&gravity=smart&format=jpeg"),
            ("rs:fill:300:225/dpr:2/plain/landscape.jpg", "w=300&h=225&mode=fill&dpr=2&format=jpeg"),
            ("rs:fit:300:225/pd:10/bg:ff0000/plain/landscape.jpg", "w=300&h=225&padding=10&bg=ff0000&format=jpeg"),
            ("c:0.5:0.5:nowe/rs:fit:300:300/plain/landscape.jpg", "w=300&h=300&crop=0,0,0.5,0.5&format=jpeg"),
            ("rs:fit:3000:3000/ex:1/plain/landscape.jpg@png", "w=3000&h=3000&extend=1&format=png"),
        ] {
            let d = try ServiceTests.get(server.port, try Self.signed("/" + dialect))
            let n = try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&" + query)
            #expect(d.status == 200 && d.headers["etag"] == n.headers["etag"], "\(dialect)")
            #expect(n.headers["x-cache"] == "HIT" && n.body == d.body, "\(dialect)")
        }
    }

    /// Native `extend` places its padding by `gravity`, and gravity is in the key: north
    /// and the default are two results, the picture at the top and in the middle.
    @Test func extendPlacesByGravity() throws {
        let server = try serve()
        let base = "/thumb?src=logo.png&w=1600&h=1600&extend=1&bg=0000ff&format=png"
        let centre = try ServiceTests.get(server.port, base)
        let north = try ServiceTests.get(server.port, base + "&gravity=north")
        let corner = try ServiceTests.get(server.port, base + "&gravity=southeast")
        #expect(north.headers["etag"] != centre.headers["etag"] && north.headers["x-cache"] == "MISS")
        let (c, n, se) = (
            try ImageFile.decode(centre.body), try ImageFile.decode(north.body), try ImageFile.decode(corner.body)
        )
        #expect(c.width == 1600 && c.height == 1600)
        // The 800×800 logo: at the top (north), in the middle, in the bottom right corner.
        #expect(n.pixel(800, 1200) == [0, 0, 255, 255] && n.pixel(800, 100) != [0, 0, 255, 255])
        #expect(c.pixel(800, 100) == [0, 0, 255, 255] && c.pixel(800, 1500) == [0, 0, 255, 255])
        #expect(se.pixel(100, 100) == [0, 0, 255, 255] && se.pixel(1500, 1500) != [0, 0, 255, 255])
    }

    /// `watermark:opacity:position:x:y:scale` on the first configured watermark: the
    /// sample logo (800×800) fitted into 0.2 of a 300×200 result (40×40) at the top left;
    /// nothing else of the picture changes.
    @Test func aWatermarkAtImgproxysPlace() throws {
        let server = try serve(["ASPECT_WATERMARKS": #"{"logo": {"src": "logo.png"}}"#])
        let plain = try ImageFile.decode(
            try ServiceTests.get(server.port, try Self.signed("/w:300/plain/landscape.jpg@png")).body)
        let marked = try ServiceTests.get(
            server.port, try Self.signed("/w:300/wm:1:nowe:0:0:0.2/plain/landscape.jpg@png"))
        #expect(marked.status == 200, "\(marked.text)")
        let img = try ImageFile.decode(marked.body)
        #expect(img.width == 300 && img.height == 200)
        var inside = 0
        var outside = 0
        for y in 0..<200 {
            for x in 0..<300 where img.pixel(x, y) != plain.pixel(x, y) {
                if x < 40 && y < 40 { inside += 1 } else { outside += 1 }
            }
        }
        #expect(inside > 400 && outside == 0, "\(inside) pixels changed inside, \(outside) outside")
    }

    @Test func headersAndStatuses() throws {
        let server = try serve()
        let att = try ServiceTests.get(
            server.port, try Self.signed("/fn:holiday/att:1/w:100/plain/landscape.jpg@png"))
        #expect(att.headers["content-disposition"] == #"attachment; filename="holiday.png""#)
        let expired = try ServiceTests.get(server.port, try Self.signed("/exp:1000000000/w:100/plain/landscape.jpg"))
        #expect(expired.status == 410 && expired.text.contains("\"gone\""))
        let future = try ServiceTests.get(server.port, try Self.signed("/exp:4000000000/w:100/plain/landscape.jpg"))
        #expect(future.status == 200)
        let unsupported = try ServiceTests.get(server.port, try Self.signed("/obj:face/plain/landscape.jpg"))
        #expect(unsupported.status == 400 && unsupported.text.contains("'obj' is not supported"))
        let outside = try ServiceTests.get(server.port, try Self.signed("/plain/http://elsewhere.dev/a.jpg"))
        #expect(outside.status == 403)
        let b64 = Data("portrait.jpg".utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
        let base64 = try ServiceTests.get(server.port, try Self.signed("/rs:fit:120:120/\(b64).png"))
        #expect(base64.status == 200 && base64.headers["content-type"] == "image/png")
        #expect(try size(base64.body) == (80, 120))
        #expect(try ServiceTests.get(server.port, "/favicon.ico").status == 404)
    }

    /// IMGPROXY_KEY, IMGPROXY_SALT and IMGPROXY_SIGNATURE_SIZE as imgproxy reads them; a
    /// server that signs its native URLs refuses unsigned dialect ones; off, the routes are 404s.
    @Test func configuration() throws {
        let truncated = try ServeProcess(
            samples: dir,
            env: [
                "ASPECT_IMGPROXY_ENABLED": "true", "IMGPROXY_KEY": Self.key, "IMGPROXY_SALT": Self.salt,
                "IMGPROXY_SIGNATURE_SIZE": "8", "ASPECT_CACHE_DIR": "cache-8",
            ])
        let short = try Self.signed("/w:100/plain/landscape.jpg", size: 8)
        #expect(try ServiceTests.get(truncated.port, short).status == 200)
        #expect(try ServiceTests.get(truncated.port, try Self.signed("/w:100/plain/landscape.jpg")).status == 403)

        let strict = try ServeProcess(
            samples: dir,
            env: [
                "ASPECT_IMGPROXY_ENABLED": "true", "ASPECT_SECURITY_SIGNINGKEY": "0123456789abcdef0123",
                "ASPECT_CACHE_DIR": "cache-strict",
            ])
        let r = try ServiceTests.get(strict.port, "/insecure/w:100/plain/landscape.jpg")
        #expect(r.status == 403 && r.text.contains("imgproxy.key"))

        let off = try ServeProcess(samples: dir, env: ["ASPECT_CACHE_DIR": "cache-off"])
        #expect(try ServiceTests.get(off.port, try Self.signed("/w:100/plain/landscape.jpg")).status == 404)

        let half = try Binary.run(
            ["serve", "--port", "0"], env: ["ASPECT_IMGPROXY_KEY": Self.key, "ASPECT_IMAGES_ROOT": "images"], cwd: dir)
        #expect(half.status == 2 && half.stderr.contains("imgproxy.salt"))
    }
}
