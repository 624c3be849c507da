import Foundation
import Imaging
import TestSupport
import Testing

/// Presets and `security.onlyPresets` through the real binary.
@Suite(.serialized) struct PresetServiceTests {
    let dir: URL

    init() throws {
        dir = try ServeProcess.sampleFolder("presets")
        try Data(
            #"{"presets": {"avatar": "w=64&h=64&mode=fill&gravity=smart&shape=circle", "card": "w=300&ratio=4:3&mode=fill"}}"#
                .utf8
        ).write(to: dir.appendingPathComponent("config.json"))
    }

    func serve(_ env: [String: String] = [:]) throws -> ServeProcess {
        try ServeProcess(samples: dir, env: env, args: ["--config", dir.appendingPathComponent("config.json").path])
    }

    func size(_ body: [UInt8]) throws -> (Int, Int) {
        let file = dir.appendingPathComponent("out-\(UUID().uuidString)")
        try Data(body).write(to: file)
        let info = try Thumbnailer(limits: ImagingLimits()).probe(path: file.path)
        return (info.size.width, info.size.height)
    }

    @Test func presetsExpandAndRequestsOverride() throws {
        let s = try serve()
        let avatar = try ServiceTests.get(s.port, "/thumb?src=landscape.jpg&preset=avatar")
        #expect(avatar.status == 200 && avatar.headers["content-type"] == "image/png", "\(avatar.text)")
        #expect(try size(avatar.body) == (64, 64))
        // The preset and its parameters spelled out are one cache entry.
        let spelled = try ServiceTests.get(
            s.port, "/thumb?src=landscape.jpg&w=64&h=64&mode=fill&gravity=smart&shape=circle")
        #expect(spelled.headers["etag"] == avatar.headers["etag"] && spelled.headers["x-cache"] == "HIT")
        let wide = try ServiceTests.get(s.port, "/thumb?src=landscape.jpg&preset=card&w=400&dpr=2")
        #expect(try size(wide.body) == (800, 600))
        let info = try ServiceTests.get(s.port, "/info?src=landscape.jpg&preset=card")
        #expect(info.text.contains(#""output": {"width": 300, "height": 225"#), "\(info.text)")
        let unknown = try ServiceTests.get(s.port, "/thumb?src=landscape.jpg&preset=hero")
        #expect(unknown.status == 400 && unknown.text.contains("the presets are avatar, card"), "\(unknown.text)")
    }

    @Test func onlyPresetsServesNoOtherVariant() throws {
        let s = try serve(["ASPECT_SECURITY_ONLYPRESETS": "true"])
        #expect(try ServiceTests.get(s.port, "/thumb?src=landscape.jpg&preset=avatar&dpr=2&format=webp").status == 200)
        for target in [
            "/thumb?src=landscape.jpg&w=100", "/thumb?src=landscape.jpg&preset=card&w=900",
            "/info?src=landscape.jpg&mode=fit", "/thumb?src=landscape.jpg",
        ] {
            let r = try ServiceTests.get(s.port, target)
            #expect(r.status == 400 && r.text.contains("presets only"), "\(target): \(r.text)")
        }
    }

    @Test func aBadPresetStopsStartUpNamingIt() throws {
        let r = try Binary.run(
            ["serve", "--port", "0"], env: ["ASPECT_PRESETS": #"{"thumb": "w=100&mode=wide"}"#], cwd: dir)
        #expect(r.status == 2, "\(r.stderr)")
        #expect(
            r.stderr.contains("presets") && r.stderr.contains("preset 'thumb' is not a valid request"), "\(r.stderr)")
    }

    /// `http.autoAvif`: AVIF for a browser that lists it, a cache entry of its own; WebP
    /// for the same browser when it is off.
    @Test func autoAvifChoosesAVIFOnlyWhenOn() throws {
        let browser = "image/avif,image/webp,image/apng,*/*;q=0.8"
        func get(_ port: Int, _ accept: String) throws -> TestClient.Response {
            try ServiceTests.get(port, "/thumb?src=landscape.jpg&w=120", headers: ["Accept": accept])
        }
        let on = try serve(["ASPECT_HTTP_AUTOAVIF": "true"])
        let avif = try get(on.port, browser)
        #expect(avif.headers["content-type"] == "image/avif" && avif.headers["vary"] == "Accept")
        let webp = try get(on.port, "image/webp,*/*")
        #expect(webp.headers["content-type"] == "image/webp" && webp.headers["etag"] != avif.headers["etag"])
        let off = try serve(["ASPECT_CACHE_DIR": "cache-off"])
        #expect(try get(off.port, browser).headers["content-type"] == "image/webp")
    }
}
