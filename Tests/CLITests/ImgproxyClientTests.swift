import Foundation
import Imaging
import TestSupport
import Testing

/// imgproxy URLs as a real client library builds them (issue 45): pyimgproxy 0.4 from PyPI
/// (in the test venv) signs, with a key and salt, a URL for every option it emits
/// (Tests/Helpers/imgproxy-client.py); each one Aspect answers is held to SPEC's size on
/// the sample landscape and its effect beyond the size (issue 50: 15 options passed on the
/// size `width(300)` gives alone), and each it refuses (imgproxy Pro's options, the
/// security ones) is a 400 that names the option.
@Suite(.serialized) struct ImgproxyClientTests {
    struct Case: Decodable {
        var name: String
        var url: String
        var size: [Int]?
        var effect: String

        enum CodingKeys: String, CodingKey { case name, url, size, effect }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            name = try c.decode(String.self, forKey: .name)
            url = try c.decode(String.self, forKey: .url)
            size = try? c.decode([Int].self, forKey: .size)
            effect = (try? c.decode(String.self, forKey: .effect)) ?? ""
        }
    }

    @Test func everyOptionTheLibraryEmits() throws {
        let dir = try ServeProcess.sampleFolder("pyimgproxy")
        let images = dir.appendingPathComponent("images")
        // A photograph (the drawn landscape has too little fine detail to see a blur in).
        try FileManager.default.copyItem(
            at: URL(fileURLWithPath: try Photos.path("medium.jpg")), to: images.appendingPathComponent("medium.jpg"))
        // Sources an option has something to act on: EXIF Copyright, a Display P3 profile.
        let quadrants = RawImage(
            width: 200, height: 100, bands: 3,
            pixels: (0..<(200 * 100)).flatMap { i in i % 200 < 100 ? [200, 40, 40] : [40, 160, 220] as [UInt8] })
        try Data(ImageFile.encode(quadrants, as: .jpeg, exif: ["exif-ifd0-Copyright": "Jane Doe 2026"])).write(
            to: images.appendingPathComponent("signed.jpg"))
        let p3 = images.appendingPathComponent("p3.icc")
        try Data(ICCProfileMaker.profile(ICCProfileMaker.displayP3, description: "P3")).write(to: p3)
        try Data(ImageFile.encode(quadrants, as: .jpeg, profile: .convertFromSRGB(path: p3.path))).write(
            to: images.appendingPathComponent("p3.jpg"))
        let server = try ServeProcess(
            samples: dir,
            env: [
                "ASPECT_IMGPROXY_ENABLED": "true", "ASPECT_IMGPROXY_KEY": ImgproxyServiceTests.key,
                "ASPECT_IMGPROXY_SALT": ImgproxyServiceTests.salt,
            ])
        let base = "http://127.0.0.1:\(server.port)"
        let python = MotoServer.venv + "/bin/python"
        let script = Binary.repositoryRoot.appendingPathComponent("Tests/Helpers/imgproxy-client.py").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [script, base, ImgproxyServiceTests.key, ImgproxyServiceTests.salt]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "pyimgproxy is in the test venv (scripts/test.sh installs it)")
        let cases = try JSONDecoder().decode([Case].self, from: data)
        #expect(cases.count >= 45)
        var (answered, refused) = (0, 0)
        for c in cases {
            let target = String(c.url.dropFirst(base.count))
            let r = try ServiceTests.get(server.port, target)
            if let size = c.size {
                #expect(r.status == 200, "\(c.name): \(target): \(r.text.prefix(200))")
                guard r.status == 200 else { continue }
                guard let img = try? ImageFile.decode(r.body) else {
                    Issue.record(
                        "\(c.name): \(target) answered \(r.headers["content-type"] ?? "") that does not decode")
                    continue
                }
                #expect([img.width, img.height] == size, "\(c.name): \(target)")
                if !c.effect.isEmpty {
                    #expect(try hasEffect(c, r, img, server: server), "\(c.name): \(c.effect), \(target)")
                }
                answered += 1
            } else {
                let option = String(c.name.prefix { $0 != " " })
                #expect(r.status == 400 && r.text.contains(option), "\(c.name): \(r.status) \(r.text.prefix(200))")
                refused += 1
            }
        }
        // What the closing note counts.
        print("ImgproxyClientTests: \(answered) answered at SPEC's sizes, \(refused) refused naming the option")
        #expect(answered == 38 && refused == 12)
    }

    /// The plain render the effect is judged against: the same source at `width`, as PNG
    /// where the option's own answer is a PNG.
    func plain(_ server: ServeProcess, _ source: String, width: Int, png: Bool) throws -> TestClient.Response {
        try ServiceTests.get(
            server.port, try ImgproxyServiceTests.signed("/w:\(width)\(png ? "/f:png" : "")/plain/\(source)"))
    }

    /// Mean absolute difference between horizontal neighbours: how much fine detail.
    static func detail(_ img: RawImage) -> Double {
        var (sum, n) = (0, 0)
        for y in 0..<img.height {
            for x in 1..<img.width {
                sum += abs(Int(img.pixel(x, y)[1]) - Int(img.pixel(x - 1, y)[1]))
                n += 1
            }
        }
        return Double(sum) / Double(max(1, n))
    }

    func hasEffect(_ c: Case, _ r: TestClient.Response, _ img: RawImage, server: ServeProcess) throws -> Bool {
        let source = String(c.url.split(separator: "/").last?.prefix { $0 != "@" } ?? "")
        let landscape = "landscape.jpg"
        switch c.effect {
        case "red corner":
            let p = img.pixel(2, 2)
            return p[0] > 240 && p[1] < 20 && p[2] < 20 && r.headers["content-type"] == "image/jpeg"
        case "smoother", "sharper":
            let base = Self.detail(try ImageFile.decode(try plain(server, "medium.jpg", width: 300, png: true).body))
            let own = Self.detail(img)
            return c.effect == "smoother" ? own < base * 0.8 : own > base * 1.1
        case "blocks of 5":
            // Every 5×5 block from the top left is one colour (a lossless PNG).
            return stride(from: 0, to: 295, by: 5).allSatisfy { x in
                stride(from: 0, to: 195, by: 5).allSatisfy { y in img.pixel(x, y) == img.pixel(x + 4, y + 4) }
            }
        case "copyright":
            return try ImageFile.metadataText(r.body, "exif-ifd0-Copyright")?.hasPrefix("Jane Doe 2026") == true
        case "no copyright":
            return try ImageFile.metadataText(r.body, "exif-ifd0-Copyright") == nil
        case "profile": return try ImageFile.iccProfile(r.body) != nil
        case "no profile":
            // Converted to sRGB and the profile dropped: the left half's red is sRGB red again.
            let p = img.pixel(20, 25)
            return try ImageFile.iccProfile(r.body) == nil && abs(Int(p[0]) - 200) <= 8 && abs(Int(p[1]) - 40) <= 8
        case "same": return r.body == (try plain(server, source, width: 300, png: false).body)
        case "smaller": return r.body.count < (try plain(server, landscape, width: 300, png: false).body.count) * 3 / 4
        case "at most 10000 bytes": return r.body.count <= 10000
        case "webp": return r.headers["content-type"] == "image/webp" && r.body.starts(with: Array("RIFF".utf8))
        case "attachment": return r.headers["content-disposition"]?.hasPrefix("attachment") == true
        case "the source's bytes":
            let file = server.dir.appendingPathComponent("images/" + source)
            return r.body == [UInt8](try Data(contentsOf: file))
        default: return false
        }
    }
}
