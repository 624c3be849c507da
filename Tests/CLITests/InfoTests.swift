import AspectClient
import Core
import Foundation
import Imaging
import TestSupport
import Testing

/// `GET /info` through the real binary: the source's upright size and ratio from its
/// header, the placeholders, and the `output` `/thumb` would give, from the same plan.
@Suite(.serialized) struct InfoTests {
    let dir: URL
    static let sources = ["landscape.jpg", "portrait.jpg", "logo.png", "square.webp"]
    static let photos = ["big.jpg", "medium.jpg", "portrait.jpg", "alpha.png"]

    init() throws {
        dir = try ServeProcess.sampleFolder("info")
        let images = dir.appendingPathComponent("images")
        let fm = FileManager.default
        try fm.createDirectory(at: images.appendingPathComponent("photos"), withIntermediateDirectories: true)
        for name in Self.photos {
            try fm.copyItem(atPath: try Photos.path(name), toPath: images.appendingPathComponent("photos/\(name)").path)
        }
        // A JPEG cut in half, and bytes that are no image.
        let whole = try Data(contentsOf: images.appendingPathComponent("landscape.jpg"))
        try whole.prefix(whole.count / 2).write(to: images.appendingPathComponent("cut.jpg"))
        try Data("not an image".utf8).write(to: images.appendingPathComponent("text.jpg"))
    }

    func serve(_ env: [String: String] = [:]) throws -> ServeProcess {
        try ServeProcess(samples: dir, env: env)
    }

    struct Info: Decodable {
        struct Source: Decodable {
            let width: Int
            let height: Int
            let format: String
            let hasAlpha: Bool
            let orientation: Int
            let frames: Int
            let bytes: Int
        }
        struct Output: Decodable {
            let width: Int
            let height: Int
            let format: String
        }
        let source: Source
        let ratio: Double
        let thumbhash: String
        let blurhash: String
        let averageColor: String?
        let dominantColor: String?
        let output: Output?
    }

    static func info(_ r: TestClient.Response) throws -> Info {
        try JSONDecoder().decode(Info.self, from: Data(r.body))
    }

    /// SPEC: Efficiency: a /thumb miss leaves /info's answer behind, from its own decode:
    /// /info after it is a hit, with the same facts /info's own decode gives (the
    /// placeholders from another decode of the same picture: their colours within a few
    /// levels), under a weak ETag.
    @Test func infoAfterThumbIsAHitWithTheSameFacts() throws {
        let s = try serve()
        let fresh = try serve(["ASPECT_CACHE_DIR": "cache-fresh"])
        for src in ["landscape.jpg", "portrait.jpg", "logo.png", "photos/medium.jpg"] {
            #expect(try ServiceTests.get(s.port, "/thumb?src=\(src)&w=400").headers["x-cache"] == "MISS")
            let after = try ServiceTests.get(s.port, "/info?src=\(src)")
            #expect(after.headers["x-cache"] == "HIT" && after.headers["etag"]?.hasPrefix("W/") == true, "\(src)")
            let own = try ServiceTests.get(fresh.port, "/info?src=\(src)")
            #expect(own.headers["x-cache"] == "MISS" && own.headers["etag"] == after.headers["etag"])
            let (a, b) = (try Self.info(after), try Self.info(own))
            #expect(a.source.width == b.source.width && a.source.height == b.source.height && a.ratio == b.ratio)
            #expect(a.source.format == b.source.format && a.source.hasAlpha == b.source.hasAlpha, "\(src)")
            func rgb(_ hex: String?) -> [Int] {
                let h = Array((hex ?? "").dropFirst())
                return stride(from: 0, to: min(6, h.count), by: 2).map { Int(String(h[$0..<$0 + 2]), radix: 16) ?? -99 }
            }
            let (ca, cb) = (rgb(a.averageColor), rgb(b.averageColor))
            #expect(ca.count == 3 && zip(ca, cb).allSatisfy { abs($0 - $1) <= 3 }, "\(src): \(ca) \(cb)")
        }
        // A crop's decode is not of the whole picture: /info describes for itself.
        _ = try ServiceTests.get(s.port, "/thumb?src=square.webp&w=100&crop=0,0,0.5,0.5")
        #expect(try ServiceTests.get(s.port, "/info?src=square.webp").headers["x-cache"] == "MISS")
    }

    /// Every sample and photo: the upright size libvips' header gives, the ratio, and
    /// placeholders that decode to the image's shape and near its colours.
    @Test func everySourceIsDescribedUpright() throws {
        let s = try serve()
        let thumbnailer = try Thumbnailer(limits: ImagingLimits())
        for src in Self.sources + Self.photos.map({ "photos/\($0)" }) {
            let path = dir.appendingPathComponent("images/\(src)").path
            let header = try thumbnailer.probe(path: path)
            let r = try ServiceTests.get(s.port, "/info?src=\(src)")
            #expect(r.status == 200 && r.headers["content-type"] == "application/json", "\(src): \(r.text)")
            let info = try Self.info(r)
            #expect(info.source.width == header.size.width && info.source.height == header.size.height, "\(src)")
            #expect(info.source.format == header.format && info.source.hasAlpha == header.hasAlpha)
            #expect(info.source.orientation == header.orientation && info.source.frames == 1)
            #expect(info.source.bytes == Int(header.bytes))
            #expect(abs(info.ratio - Double(header.size.width) / Double(header.size.height)) < 1e-9)
            #expect(info.output == nil, "no /thumb parameter, no output")
            let placeholder = try #require(ThumbHashImage(base64: info.thumbhash), "\(src)")
            let ratio = info.ratio
            if ratio > 1.25 || ratio < 0.8 {
                #expect((placeholder.width > placeholder.height) == (ratio > 1), "\(src)")
            }
            #expect(info.blurhash.count == 28, "4×3 components")
            #expect(info.averageColor?.count == 7 && info.dominantColor?.count == 7)
        }
        // EXIF orientation 6: stored landscape, upright portrait.
        let rotated = try Self.info(try ServiceTests.get(s.port, "/info?src=photos/portrait.jpg"))
        #expect(rotated.source.orientation == 6 && rotated.source.width < rotated.source.height)
    }

    static let queries = [
        "w=300", "h=200", "w=300&h=300", "w=300&h=300&mode=fill", "w=300&ratio=4:3&mode=fill", "w=250&ratio=16:9",
        "w=300&ratio=4:3&mode=pad", "w=200&h=100&mode=stretch", "ratio=1&mode=fill&w=120", "w=120&ratio=1&shape=circle",
        "w=180&ratio=3:1&mode=fill&shape=capsule", "w=300&dpr=2", "w=150&ratio=4:3&mode=fill&dpr=1.5",
        "w=4000&upscale=1&format=jpeg", "w=4000", "w=90&format=webp", "w=90&format=png", "w=90&format=avif",
        "w=90&h=90&mode=fill&gravity=smart", "h=64&mode=fit", "w=333&h=111&mode=fill&gravity=north",
    ]

    /// `output` is what `/thumb` returns, over 21 parameter sets × 5 sources: 105 pairs.
    @Test func outputIsWhatThumbReturns() throws {
        let s = try serve()
        let thumbnailer = try Thumbnailer(limits: ImagingLimits())
        var pairs = 0
        for src in Self.sources + ["photos/portrait.jpg"] {
            for q in Self.queries {
                let info = try ServiceTests.get(s.port, "/info?src=\(src)&\(q)")
                let thumb = try ServiceTests.get(s.port, "/thumb?src=\(src)&\(q)")
                #expect(info.status == thumb.status, "\(src)&\(q): \(info.text)")
                guard thumb.status == 200 else { continue }
                let output = try #require(try Self.info(info).output, "\(src)&\(q)")
                let file = dir.appendingPathComponent("out-\(UUID().uuidString)")
                try Data(thumb.body).write(to: file)
                defer { try? FileManager.default.removeItem(at: file) }
                let made = try thumbnailer.probe(path: file.path)
                #expect(output.width == made.size.width && output.height == made.size.height, "\(src)&\(q)")
                #expect(thumb.headers["content-type"] == "image/\(output.format)", "\(src)&\(q)")
                pairs += 1
            }
        }
        #expect(pairs >= 100)
    }

    /// The statuses of `/thumb`: a bad parameter, a missing, cut or foreign source, a
    /// source over the limits; ETag, 304, and the result store.
    @Test func errorsCachingAnd304AsThumb() throws {
        let s = try serve(["ASPECT_LIMITS_MAXSOURCEBYTES": "1000000"])
        let cases: [(String, Int, String)] = [
            ("/info?src=landscape.jpg&w=abc", 400, "bad_param"),
            ("/info?src=landscape.jpg&mode=wide", 400, "bad_param"),
            ("/info?w=100", 400, "bad_param"), ("/info?src=../etc/passwd", 403, "forbidden_path"),
            ("/info?src=nope.jpg", 404, "not_found"), ("/info?src=cut.jpg", 415, "unsupported_source"),
            ("/info?src=text.jpg", 415, "unsupported_source"), ("/info?src=photos/big.jpg", 413, "source_too_large"),
        ]
        for (target, status, code) in cases {
            let r = try ServiceTests.get(s.port, target)
            #expect(r.status == status && r.text.contains(#""code": "\#(code)""#), "\(target): \(r.text)")
        }
        let first = try ServiceTests.get(s.port, "/info?src=logo.png")
        let again = try ServiceTests.get(s.port, "/info?src=logo.png")
        #expect(first.headers["x-cache"] == "MISS" && again.headers["x-cache"] == "HIT" && again.body == first.body)
        #expect(first.headers["cache-control"]?.hasPrefix("public, max-age=") == true)
        let etag = try #require(first.headers["etag"])
        let notModified = try ServiceTests.get(s.port, "/info?src=logo.png", headers: ["If-None-Match": etag])
        #expect(notModified.status == 304 && notModified.body.isEmpty)
        // /info and /thumb of the same parameters are different entries.
        #expect(try ServiceTests.get(s.port, "/thumb?src=logo.png&w=80").headers["etag"] != etag)
        #expect(try ServiceTests.get(s.port, "/info?src=logo.png&w=80").headers["etag"] != etag)
    }

    /// Signed as `/thumb` is, with "/info?" in place of "/thumb?".
    @Test func signedWithItsOwnPath() throws {
        let key = "an-info-signing-key-0123"
        let s = try serve(["ASPECT_SECURITY_SIGNINGKEY": key])
        let query = "src=logo.png&w=100"
        let base = try #require(URL(string: "http://x"))
        let thumbURL = try #require(Thumbnail(src: "logo.png").width(100).url(base: base, signingKey: key))
        let thumbSig = try #require(
            URLComponents(string: thumbURL.absoluteString)?.queryItems?.first { $0.name == "sig" }?.value)
        #expect(try ServiceTests.get(s.port, "/info?\(query)").status == 403)
        #expect(
            try ServiceTests.get(s.port, "/info?\(query)&sig=\(thumbSig)").status == 403,
            "a /thumb signature is not /info's")
        let signed = try Binary.run(["sign", "/info?\(query)"], env: ["ASPECT_SECURITY_SIGNINGKEY": key])
        let path = signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(signed.status == 0 && path.hasPrefix("/info?"), "\(signed.stderr)")
        let r = try ServiceTests.get(s.port, path)
        #expect(r.status == 200, "\(path): \(r.text)")
    }

    /// The app's side: `AspectServer.info` reads `/info` over URLSession, a layout built
    /// from its ratio asks for a thumbnail the server serves at the planned size, and an
    /// error arrives with the server's status and message.
    @Test func theClientReadsInfoAndItsLayoutIsServed() async throws {
        let s = try serve()
        let server = AspectServer(base: try #require(URL(string: "http://127.0.0.1:\(s.port)")))
        let info = try await server.info(src: "portrait.jpg")
        #expect(info.source.width == 1200 && info.source.height == 1800 && info.output == nil)
        #expect(info.placeholder != nil)
        let layout = AspectLayout(
            src: "portrait.jpg", imageRatio: info.ratio, kind: .fill(ratio: 4.0 / 3), container: (375, .infinity),
            scale: 3)
        let planned = try await server.info(src: "portrait.jpg", for: layout.thumbnail)
        // 400 points (375 rounded up to the step) at @3x, 4:3.
        #expect(planned.output?.width == 1200 && planned.output?.height == 900, "\(String(describing: planned.output))")
        let url = try #require(server.url(layout.thumbnail))
        let thumb = try ServiceTests.get(
            s.port, String(url.absoluteString.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" }))
        #expect(thumb.status == 200, "\(url): \(thumb.text)")
        do {
            _ = try await server.info(src: "nope.jpg")
            Issue.record("a missing source gave no error")
        } catch let failure as AspectServer.Failure {
            #expect(failure.status == 404 && failure.message.contains("nope.jpg"))
        }
    }
}
