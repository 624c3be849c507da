import Foundation
import ImagingTestSupport
import TestSupport
import Testing

@testable import Imaging

/// A video through the server and the CLI (SPEC: Video): the sample clip (`aspect samples`
/// writes it with FFmpeg's encoder) as a poster, a hover preview and `/info`, from a folder
/// and from an HTTP origin through the source cache, and `aspect thumb` with a clip in.
@Suite struct VideoServiceTests {
    @Test func aClipFromAFolderAndFromAnOrigin() throws {
        let dir = try ServeProcess.sampleFolder("video")
        let clip = try [UInt8](Data(contentsOf: dir.appendingPathComponent("images/clip.mp4")))
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.put("clip.mp4", clip)
        let local = try ServeProcess(samples: dir)
        let remote = try ServeProcess(
            dir: dir,
            env: [
                "ASPECT_IMAGES_ROOT": origin.base, "ASPECT_CACHE_DIR": "cache-remote", "ASPECT_LOG_ACCESS": "false",
            ])
        for (server, prefix) in [(local, ""), (remote, "files/")] {
            let poster = try ServiceTests.get(server.port, "/thumb?src=\(prefix)clip.mp4&w=160&ratio=1&mode=fill")
            #expect(poster.status == 200 && poster.headers["content-type"] == "image/jpeg", "\(poster.text)")
            let img = try ImageFile.decode(poster.body)
            #expect(img.width == 160 && img.height == 160)
            let again = try ServiceTests.get(server.port, "/thumb?src=\(prefix)clip.mp4&w=160&ratio=1&mode=fill")
            #expect(again.headers["x-cache"] == "HIT" && again.body == poster.body)
            let preview = try ServiceTests.get(
                server.port, "/thumb?src=\(prefix)clip.mp4&w=120&frames=4", headers: ["Accept": "image/webp,*/*"])
            #expect(preview.status == 200 && preview.headers["content-type"] == "image/webp")
            let animation = try ImageFile.animation(preview.body)
            #expect(animation.frames == 4 && animation.delays == [500, 500, 500, 500] && animation.width == 120)
            let info = try ServiceTests.get(server.port, "/info?src=\(prefix)clip.mp4&w=120")
            #expect(
                info.text.contains(#""format": "mp4""#)
                    && info.text.contains(#""duration": 4, "codec": "h264", "fps": 12"#),
                "\(info.text)")
            #expect(info.text.contains(#""output": {"width": 120, "height": 90, "format": "jpeg"}"#), "\(info.text)")
            let past = try ServiceTests.get(server.port, "/thumb?src=\(prefix)clip.mp4&w=120&t=4.5")
            #expect(past.status == 400 && past.text.contains("the video is 4 s long"), "\(past.text)")
        }
        // The origin's clip was downloaded once, whatever was asked of it.
        #expect(origin.requests("/files/clip.mp4") == 1, "\(origin.log)")
    }

    @Test func aspectThumbTakesAClip() throws {
        let dir = try ServeProcess.sampleFolder("video-cli")
        let clip = dir.appendingPathComponent("images/clip.mp4").path
        let still = dir.appendingPathComponent("still.png").path
        let r = try Binary.run(["thumb", clip, still, "--w", "100", "--t", "2"])
        #expect(r.status == 0, "\(r.stderr)")
        let img = try ImageFile.decode(try [UInt8](Data(contentsOf: URL(fileURLWithPath: still))))
        #expect(img.width == 100 && img.height == 75)
        let gif = dir.appendingPathComponent("preview.gif").path
        let p = try Binary.run(["thumb", clip, gif, "--w", "100", "--frames", "3"])
        #expect(p.status == 0, "\(p.stderr)")
        #expect(try ImageFile.animation(try [UInt8](Data(contentsOf: URL(fileURLWithPath: gif)))).frames == 3)
    }
}
