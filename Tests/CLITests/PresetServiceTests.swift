import Foundation
import Imaging
import TestSupport
import Testing

/// Presets through the real binary: what needs it (start-up, AVIF). How presets expand,
/// and `security.onlyPresets`, are ServiceTests' FlowTests, in process.
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
