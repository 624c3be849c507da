import Foundation
import Imaging
import ImagingTestSupport
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
        // The window holds the man on the right's face (columns 377–442 of the picture at
        // 533×300), read off the pixels; the centre's (from 117) does not.
        let whole = try ImageFile.decode(
            try ServiceTests.get(server.port, "/thumb?src=zidane.jpg&h=300&format=png").body)
        #expect(whole.width == 533)
        let at = img.offset(in: whole)
        let (faceLeft, faceRight) = (0.708 * 533, (0.708 + 0.122) * 533)
        #expect(at.meanDifference < 10 && Double(at.x) <= faceLeft && Double(at.x + 300) >= faceRight, "\(at)")
        let centre = try ImageFile.decode(
            try ServiceTests.get(
                server.port, "/thumb?src=zidane.jpg&w=300&h=300&mode=fill&format=jpeg&upscale=1"
            ).body)
        let middle = centre.offset(in: whole)
        #expect(abs(middle.x - 117) <= 1 && Double(middle.x + 300) < faceRight, "\(middle)")
    }
}

/// The face cut through the binary on a portrait stored in each EXIF orientation (issue 50):
/// where the window is, read off the answer's pixels against the upright picture.
@Suite struct FaceOrientationServiceTests {
    @Test func theCutHoldsTheFaceInEveryOrientation() throws {
        let dir = try ServeProcess.sampleFolder("face-orientation")
        let images = dir.appendingPathComponent("images")
        let (upright, face) = try FacePortrait.make(hopper: try Photos.path("faces/grace_hopper.jpg"))
        for o in 1...8 {
            try Data(ImageFile.encode(upright.stored(orientation: o), as: .jpeg, orientation: o)).write(
                to: images.appendingPathComponent("o\(o).jpg"))
        }
        try Data(ImageFile.encode(upright, as: .png)).write(to: images.appendingPathComponent("upright.png"))
        let server = try ServeProcess(samples: dir)
        // The upright picture at the scale of the cut: 256 wide, 417 high (the face is 46
        // pixels high there, and was missed where the render looked on its own decode).
        let whole = try ImageFile.decode(
            try ServiceTests.get(server.port, "/thumb?src=upright.png&w=256&format=png").body)
        #expect(whole.width == 256 && whole.height == 417)
        let (top, bottom) = (face.y * 417, (face.y + face.h) * 417)
        for o in 1...8 {
            let r = try ServiceTests.get(
                server.port, "/thumb?src=o\(o).jpg&w=256&ratio=1&mode=fill&gravity=face&format=png")
            #expect(r.status == 200, "o\(o): \(r.text)")
            let cut = try ImageFile.decode(r.body)
            #expect(cut.width == 256 && cut.height == 256)
            let at = cut.offset(in: whole)
            #expect(at.meanDifference < 8, "o\(o): the answer is not a cut of the upright picture (\(at))")
            #expect(
                Double(at.y) <= top && Double(at.y + 256) >= bottom,
                "o\(o): the window rows \(at.y)–\(at.y + 256) leave out the face's \(top)–\(bottom)")
        }
    }
}
