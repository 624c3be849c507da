import Foundation
import Imaging
import TestSupport
import Testing

/// `watermarks` and `wm` through the real binary (SPEC: Watermarks): read at start-up (a
/// missing one stops it), a 400 naming the configured ones, and the image's content in
/// the cache key.
@Suite(.serialized) struct WatermarkServiceTests {
    let dir: URL
    var config: URL { dir.appendingPathComponent("config.json") }

    init() throws {
        dir = try ServeProcess.sampleFolder("watermarks")
        try writeLogo([255, 0, 0])
        try Data(#"{"watermarks": {"logo": {"src": "logo.png", "scale": 0.25, "position": "northwest"}}}"#.utf8)
            .write(to: config)
    }

    func writeLogo(_ rgb: [UInt8]) throws {
        let png = try ImageFile.encode(RawImage(width: 40, height: 20, filledWith: rgb + [255]), as: .png)
        try Data(png).write(to: dir.appendingPathComponent("images/logo.png"))
    }

    func serve() throws -> ServeProcess { try ServeProcess(samples: dir, args: ["--config", config.path]) }

    @Test func aWatermarkIsOverlaidAndItsImageIsPartOfTheKey() throws {
        let target = "/thumb?src=landscape.jpg&w=200&format=png&wm=logo"
        var server = try serve()
        let plain = try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&w=200&format=png")
        let red = try ServiceTests.get(server.port, target)
        #expect(red.status == 200 && red.headers["etag"] != plain.headers["etag"])
        let img = try ImageFile.decode(red.body)
        #expect(Array(img.pixel(10, 5).prefix(3)) == [255, 0, 0], "50×25 at the top left")
        #expect(try ServiceTests.get(server.port, target).headers["x-cache"] == "HIT")

        // The same name, another picture: after a restart, another key, rendered again.
        server.signal(SIGTERM)
        _ = server.wait(seconds: 10)
        try writeLogo([0, 0, 255])
        server = try serve()
        let blue = try ServiceTests.get(server.port, target)
        #expect(blue.headers["x-cache"] == "MISS" && blue.headers["etag"] != red.headers["etag"])
        #expect(Array(try ImageFile.decode(blue.body).pixel(10, 5).prefix(3)) == [0, 0, 255])
    }

    @Test func anUnknownNameIsA400NamingTheConfiguredOnes() throws {
        let server = try serve()
        let r = try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&w=200&wm=brand")
        #expect(r.status == 400)
        #expect(String(decoding: r.body, as: UTF8.self).contains("the configured ones are logo"))
    }

    @Test func aWatermarkThatCannotBeReadStopsStartUp() throws {
        let missing = try Binary.run(
            ["serve", "--port", "0"],
            env: ["ASPECT_IMAGES_ROOT": "images", "ASPECT_WATERMARKS": #"{"brand": {"src": "brand.png"}}"#], cwd: dir)
        #expect(missing.status == 2 && missing.stderr.contains("the watermark brand (brand.png) cannot be read"))
        try Data("not an image".utf8).write(to: dir.appendingPathComponent("images/broken.png"))
        let broken = try Binary.run(
            ["serve", "--port", "0"],
            env: ["ASPECT_IMAGES_ROOT": "images", "ASPECT_WATERMARKS": #"{"b": {"src": "broken.png"}}"#], cwd: dir)
        #expect(broken.status == 2 && broken.stderr.contains("the watermark b (broken.png)"), "\(broken.stderr)")
        let bad = try Binary.run(
            ["serve", "--port", "0"],
            env: ["ASPECT_WATERMARKS": #"{"logo": {"src": "logo.png", "position": "smart"}}"#], cwd: dir)
        #expect(bad.status == 2 && bad.stderr.contains("position must be center or a compass gravity"))
    }
}
