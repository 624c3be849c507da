import Foundation
import Imaging
import TestSupport
import Testing

/// gravity=face through the binary (SPEC: Faces): `/info` gives the faces when asked (and
/// for gravity=face), in its cache key; imgproxy's `g:obj:face` is the same cache entry as
/// the native request; a hit costs no detection.
@Suite(.serialized) struct FaceServiceTests {
    let dir: URL

    init() throws {
        dir = try ServeProcess.sampleFolder("faces")
        let images = dir.appendingPathComponent("images")
        for name in ["zidane.jpg", "astronaut.png"] {
            try FileManager.default.copyItem(
                at: URL(fileURLWithPath: try Photos.path("faces/" + name)), to: images.appendingPathComponent(name))
        }
    }

    struct Face: Decodable { let x, y, w, h: Double }
    struct Info: Decodable { let faces: [Face]? }

    @Test func infoGivesTheFacesWhenAsked() throws {
        let server = try ServeProcess(samples: dir)
        let plain = try ServiceTests.get(server.port, "/info?src=zidane.jpg")
        let plainInfo = try JSONDecoder().decode(Info.self, from: Data(plain.body))
        #expect(plain.status == 200 && plainInfo.faces == nil)
        let asked = try ServiceTests.get(server.port, "/info?src=zidane.jpg&faces=1")
        #expect(asked.status == 200 && asked.headers["etag"] != plain.headers["etag"], "\(asked.text)")
        let faces = try #require(try JSONDecoder().decode(Info.self, from: Data(asked.body)).faces)
        // The man on the right, frontal; the one shouting, turned three-quarters, is missed.
        #expect(faces.count == 1 && faces.allSatisfy { $0.x > 0.6 && $0.x + $0.w <= 1 && $0.w > 0.05 }, "\(asked.text)")
        // The gravity asks for them too, with the output's size.
        let withGravity = try ServiceTests.get(server.port, "/info?src=zidane.jpg&w=200&ratio=1&mode=fill&gravity=face")
        #expect(
            withGravity.text.contains(#""faces": [{"#) && withGravity.text.contains(#""output": {"width": 200"#),
            "\(withGravity.text)")
        // /thumb takes no faces=1: a 400 that says so.
        let thumb = try ServiceTests.get(server.port, "/thumb?src=zidane.jpg&w=200&faces=1")
        #expect(thumb.status == 400 && thumb.text.contains("faces"))
    }

    @Test func imgproxysObjFaceIsTheNativeEntry() throws {
        let server = try ServeProcess(samples: dir, env: ["ASPECT_IMGPROXY_ENABLED": "true"])
        let native = try ServiceTests.get(
            server.port, "/thumb?src=zidane.jpg&w=300&h=300&mode=fill&gravity=face&format=jpeg&upscale=1")
        #expect(native.status == 200 && native.headers["x-cache"] == "MISS", "\(native.text)")
        let img = try ImageFile.decode(native.body)
        #expect(img.width == 300 && img.height == 300)
        for path in [
            "/insecure/rs:fill:300:300:1/g:obj:face/plain/zidane.jpg@jpg",
            "/insecure/rs:fill:300:300:1/g:obj/plain/zidane.jpg@jpg",
        ] {
            let dialect = try ServiceTests.get(server.port, path)
            #expect(dialect.headers["x-cache"] == "HIT" && dialect.headers["etag"] == native.headers["etag"], "\(path)")
            #expect(dialect.body == native.body)
        }
        let other = try ServiceTests.get(server.port, "/insecure/rs:fill:300:300/g:obj:dog/plain/zidane.jpg@jpg")
        #expect(other.status == 400 && other.text.contains("obj"))
        // Not the centre's cut: the two men are left and right of the frame's middle.
        let centre = try ServiceTests.get(
            server.port, "/thumb?src=zidane.jpg&w=300&h=300&mode=fill&format=jpeg&upscale=1")
        #expect(centre.headers["etag"] != native.headers["etag"] && centre.body != native.body)
    }
}
