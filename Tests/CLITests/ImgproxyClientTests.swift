import Foundation
import Imaging
import TestSupport
import Testing

/// imgproxy URLs as a real client library builds them (issue 45): pyimgproxy 0.4 from PyPI
/// (in the test venv) signs, with a key and salt, a URL for every option it emits
/// (Tests/Helpers/imgproxy-client.py); each one Aspect answers is held to SPEC's size on
/// the sample landscape, and each it refuses (imgproxy Pro's options, the security ones)
/// is a 400 that names the option.
@Suite(.serialized) struct ImgproxyClientTests {
    struct Case: Decodable {
        var name: String
        var url: String
        var size: [Int]?

        enum CodingKeys: String, CodingKey { case name, url, size }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            name = try c.decode(String.self, forKey: .name)
            url = try c.decode(String.self, forKey: .url)
            size = try? c.decode([Int].self, forKey: .size)
        }
    }

    @Test func everyOptionTheLibraryEmits() throws {
        let dir = try ServeProcess.sampleFolder("pyimgproxy")
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
                let img = try ImageFile.decode(r.body)
                #expect([img.width, img.height] == size, "\(c.name): \(target)")
                answered += 1
            } else {
                let option = String(c.name.prefix { $0 != " " })
                #expect(r.status == 400 && r.text.contains(option), "\(c.name): \(r.status) \(r.text.prefix(200))")
                refused += 1
            }
        }
        // What the closing note counts.
        print("ImgproxyClientTests: \(answered) answered at SPEC's sizes, \(refused) refused naming the option")
        #expect(answered == 37 && refused == 12)
    }
}
