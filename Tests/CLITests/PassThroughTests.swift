import Foundation
import Imaging
import TestSupport
import Testing

/// imgproxy's `raw` and `skip_processing` and the native `passthrough` through the binary
/// (SPEC: imgproxy URLs; issue 45): the source's bytes exactly, its type checked and its
/// limits held, an ETag and a 304, and processing as usual where they do not apply.
@Suite(.serialized) struct PassThroughTests {
    let dir: URL
    var images: URL { dir.appendingPathComponent("images") }

    init() throws {
        dir = try ServeProcess.sampleFolder("passthrough")
    }

    func source(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: images.appendingPathComponent(name))) }

    @Test func theSourcesBytesExactly() throws {
        let server = try ServeProcess(samples: dir, env: ["ASPECT_IMGPROXY_ENABLED": "true"])
        let jpeg = try source("landscape.jpg")
        // skp:jpg on a JPEG with no format named (it keeps its own) or asked as JPEG.
        for path in [
            "/insecure/rs:fit:100:100/skp:jpg/plain/landscape.jpg",
            "/insecure/skp:jpg:png/w:50/plain/landscape.jpg@jpg",
        ] {
            let r = try ServiceTests.get(server.port, path)
            #expect(r.status == 200 && r.headers["content-type"] == "image/jpeg", "\(path): \(r.text.prefix(200))")
            #expect(r.body == jpeg, "\(path): the source's bytes, unchanged")
        }
        // Another format asked: processed as usual.
        let webp = try ServiceTests.get(server.port, "/insecure/rs:fit:100:100/skp:jpg/plain/landscape.jpg@webp")
        #expect(webp.status == 200 && webp.headers["content-type"] == "image/webp")
        #expect(try ImageFile.decode(webp.body).width == 100)
        // raw: whatever the options, the bytes (a JPEG's, a PNG's).
        let rawJPEG = try ServiceTests.get(server.port, "/insecure/raw:1/rs:fill:10:10/plain/landscape.jpg@webp")
        #expect(rawJPEG.status == 200 && rawJPEG.body == jpeg && rawJPEG.headers["content-type"] == "image/jpeg")
        let raw = try ServiceTests.get(server.port, "/insecure/raw:1/rs:fill:10:10/plain/logo.png")
        let logo = try source("logo.png")
        #expect(raw.status == 200 && raw.body == logo && raw.headers["content-type"] == "image/png")
        // An ETag of this version of the source, and a 304 for it.
        let etag = try #require(raw.headers["etag"])
        let again = try ServiceTests.get(
            server.port, "/insecure/raw:1/rs:fill:10:10/plain/logo.png", headers: ["If-None-Match": etag])
        #expect(again.status == 304)
        // The native form.
        let native = try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&w=120&passthrough=jpeg,png")
        #expect(native.status == 200 && native.body == jpeg)
        let other = try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&w=120&passthrough=png&format=jpeg")
        #expect(other.status == 200 && other.body != jpeg)
        #expect(try ImageFile.decode(other.body).width == 120)
        // An SVG is never passed on as markup: drawn as usual.
        let svg = try ServiceTests.get(server.port, "/insecure/raw:1/w:64/plain/badge.svg@png")
        #expect(svg.status == 200 && svg.headers["content-type"] == "image/png")
        #expect(try ServiceTests.get(server.port, "/thumb?src=badge.svg&passthrough=svg").status == 400)
        #expect(try ServiceTests.get(server.port, "/insecure/skp:bmp/plain/landscape.jpg").status == 400)
    }

    /// The source limits and type checks hold: over the byte limit a 413, not an image a 415.
    @Test func limitsHold() throws {
        try Array("not an image at all".utf8).withUnsafeBytes {
            try Data($0).write(to: images.appendingPathComponent("fake.jpg"))
        }
        let server = try ServeProcess(
            samples: dir, env: ["ASPECT_IMGPROXY_ENABLED": "true", "ASPECT_LIMITS_MAXSOURCEBYTES": "10000"])
        #expect(try ServiceTests.get(server.port, "/insecure/raw:1/plain/landscape.jpg").status == 413)
        #expect(try ServiceTests.get(server.port, "/insecure/raw:1/plain/fake.jpg").status == 415)
    }
}

/// imgproxy's `strip_color_profile` and the native `profile` (SPEC: imgproxy URLs; issue
/// 45): `scp:0` keeps an Adobe RGB source's profile in a JPEG result, its pixels as stored;
/// `scp:1`, the default, converts to sRGB and embeds nothing.
@Suite(.serialized) struct ColourProfileServiceTests {
    /// Adobe RGB (1998)'s primaries, adapted to D50 as its profile stores them.
    static let adobeRGB: ICCProfileMaker.Colorants = [
        [0.6097, 0.3111, 0.0195], [0.2053, 0.6257, 0.0609], [0.1492, 0.0632, 0.7446],
    ]

    @Test func scp0KeepsTheProfileAndScp1ConvertsToSRGB() throws {
        let dir = try ServeProcess.sampleFolder("profile")
        let profile = ICCProfileMaker.profile(Self.adobeRGB, description: "Adobe RGB (1998) primaries")
        let raw = RawImage(width: 64, height: 64, filledWith: [200, 30, 30])
        let jpeg = try ImageFile.encode(raw, as: .jpeg, quality: 95, profile: .tag(profile))
        try Data(jpeg).write(to: dir.appendingPathComponent("images/adobe.jpg"))
        let server = try ServeProcess(samples: dir, env: ["ASPECT_IMGPROXY_ENABLED": "true"])
        for path in ["/insecure/scp:0/w:32/plain/adobe.jpg@jpg", "/thumb?src=adobe.jpg&w=32&format=jpeg&profile=keep"] {
            let kept = try ServiceTests.get(server.port, path)
            #expect(kept.status == 200, "\(path)")
            #expect(try ImageFile.iccProfile(kept.body) == profile, "\(path): the source's profile")
            let p = try ImageFile.decode(kept.body).pixel(16, 16)
            #expect(abs(Int(p[0]) - 200) <= 6 && abs(Int(p[1]) - 30) <= 6, "\(path): pixels as stored: \(p)")
        }
        for path in ["/insecure/scp:1/w:32/plain/adobe.jpg@jpg", "/thumb?src=adobe.jpg&w=32&format=jpeg"] {
            let converted = try ServiceTests.get(server.port, path)
            #expect(try ImageFile.iccProfile(converted.body) == nil, "\(path): no profile")
            let p = try ImageFile.decode(converted.body).pixel(16, 16)
            #expect(abs(Int(p[0]) - 200) > 6 || abs(Int(p[1]) - 30) > 6, "\(path): converted to sRGB: \(p)")
        }
        #expect(try ServiceTests.get(server.port, "/thumb?src=adobe.jpg&w=32&profile=cmyk").status == 400)
    }
}

/// imgproxy's `enforce_thumbnail` and the native `thumbnail=embedded` (SPEC: imgproxy URLs;
/// issue 45): a HEIF's embedded thumbnail decoded in place of the picture, its sizes
/// planned on the thumbnail; a HEIF without one is the picture as usual.
@Suite(.serialized) struct EmbeddedThumbnailTests {
    @Test func aHeifsEmbeddedThumbnailIsUsed() throws {
        let dir = try ServeProcess.sampleFolder("eth")
        let images = dir.appendingPathComponent("images")
        // libheif's encoder: the 2400×1600 landscape with a 160×106 thumbnail, and without one.
        for (name, thumb) in [("with.heic", ["-t", "160"]), ("without.heic", [])] {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/heif-enc")
            p.arguments =
                thumb + [
                    "-q", "80", "-o", images.appendingPathComponent(name).path,
                    images.appendingPathComponent("landscape.jpg").path,
                ]
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            p.waitUntilExit()
            #expect(p.terminationStatus == 0, "heif-enc \(name)")
        }
        let server = try ServeProcess(samples: dir, env: ["ASPECT_IMGPROXY_ENABLED": "true"])
        func size(_ path: String) throws -> (Int, Int) {
            let r = try ServiceTests.get(server.port, path)
            guard r.status == 200 else { throw TestError("\(path): \(r.status) \(r.text)") }
            let img = try ImageFile.decode(r.body)
            return (img.width, img.height)
        }
        // Fit in 100×100: the thumbnail (160×106) gives 100×66, the picture (2400×1600) 100×67.
        #expect(try size("/insecure/eth:1/rs:fit:100:100/plain/with.heic@png") == (100, 66))
        #expect(try size("/thumb?src=with.heic&w=100&h=100&thumbnail=embedded&format=png") == (100, 66))
        #expect(try size("/insecure/rs:fit:100:100/plain/with.heic@png") == (100, 67))
        #expect(try size("/insecure/eth:1/rs:fit:100:100/plain/without.heic@png") == (100, 67))
        #expect(try size("/insecure/eth:1/rs:fit:100:100/plain/landscape.jpg@png") == (100, 67), "not a HEIF")
        #expect(try ServiceTests.get(server.port, "/thumb?src=with.heic&w=100&thumbnail=yes").status == 400)
    }
}
