import Core
import Foundation
import Imaging
import ImagingTestSupport
import Signing
import TestSupport
import Testing

/// Previews as MP4 and WebM, storyboards and their WebVTT index, through the binary
/// (SPEC: Video): decoded back by FFmpeg, tiles held to the frames at their times, the
/// index parsed strictly.
@Suite(.serialized) struct VideoPreviewServiceTests {
    let dir: URL

    /// `timed.mp4`: 40 frames at 10 fps (4 s), frame i all one colour, red 6i and green
    /// 255 − 6i: a tile shows which moment it holds.
    init() throws {
        dir = try ServeProcess.sampleFolder("video-preview")
        let frames = (0..<40).map { i in
            RawImage(
                width: 192, height: 108, bands: 3,
                pixels: [UInt8]((0..<(192 * 108)).flatMap { _ in [UInt8(6 * i), UInt8(255 - 6 * i), 128] }))
        }
        try ImageFile.writeClip(
            to: dir.appendingPathComponent("images/timed.mp4").path, frames: frames, fps: 10, codec: .h264,
            keyframeEvery: 10)
    }

    static func colour(at t: Double) -> (red: Int, green: Int) {
        let i = min(39, Int((t * 10).rounded(.down)))
        return (6 * i, 255 - 6 * i)
    }

    @Test func aPreviewAsMP4AndWebMDecodesBack() throws {
        let server = try ServeProcess(samples: dir)
        let mp4 = try ServiceTests.get(server.port, "/thumb?src=clip.mp4&w=321&frames=8&format=mp4")
        #expect(
            mp4.status == 200 && mp4.headers["content-type"] == "video/mp4", "\(mp4.status) \(mp4.text.prefix(200))")
        let m = try #require(VideoFile.read(mp4.body))
        // 321 × 240.75 planned: 320 × 240 (even sides), 8 frames of 500 ms, no sound.
        #expect(m.codec == "h264" && m.frames == 8 && m.audioStreams == 0 && m.width == 320 && m.height == 240, "\(m)")
        #expect(abs(m.seconds - 4) < 0.05, "\(m.seconds) s")
        let boxes = VideoFile.topLevelBoxes(mp4.body)
        let (moov, mdat) = (try #require(boxes.firstIndex(of: "moov")), try #require(boxes.firstIndex(of: "mdat")))
        #expect(boxes.first == "ftyp" && moov < mdat, "\(boxes)")
        let webm = try ServiceTests.get(server.port, "/thumb?src=clip.mp4&w=320&frames=8&format=webm")
        let w = try #require(VideoFile.read(webm.body))
        #expect(
            webm.headers["content-type"] == "video/webm" && w.codec == "vp9" && w.frames == 8 && w.audioStreams == 0)
        #expect(w.width == 320 && w.height == 240, "\(w)")
        // An animated GIF: every frame, its delays kept.
        let gif = try ServiceTests.get(server.port, "/thumb?src=bounce.gif&w=120&format=mp4")
        let source = try ImageFile.animation(
            try [UInt8](Data(contentsOf: dir.appendingPathComponent("images/bounce.gif"))))
        let g = try #require(VideoFile.read(gif.body))
        #expect(g.frames == source.frames && g.width == 120 && g.width % 2 == 0 && g.height % 2 == 0, "\(g)")
        #expect(abs(g.seconds - Double(source.delays.reduce(0, +)) / 1000) < 0.05, "\(g.seconds) s")
        // A still has no preview; auto and best stay images whatever Accept says.
        // Every frame's output is held to the limit, padding included.
        let padded = try ServiceTests.get(
            server.port, "/thumb?src=clip.mp4&w=64&padding=2000&frames=100&format=mp4")
        #expect(padded.status == 413 || padded.status == 400, "\(padded.status) \(padded.text)")
        #expect(padded.text.contains("limits.maxSourcePixels"), "\(padded.text)")
        let tiny = try ServiceTests.get(server.port, "/thumb?src=clip.mp4&w=1&frames=2&format=mp4")
        #expect(tiny.status == 400 && tiny.text.contains("2 pixels at least"), "\(tiny.status) \(tiny.text)")
        let still = try ServiceTests.get(server.port, "/thumb?src=landscape.jpg&w=100&format=mp4")
        #expect(still.status == 400 && still.text.contains("format=mp4 makes a preview"))
        for format in ["auto", "best"] {
            let image = try ServiceTests.get(
                server.port, "/thumb?src=clip.mp4&w=100&frames=4&format=\(format)", headers: ["Accept": "video/*,*/*"])
            #expect(image.headers["content-type"]?.hasPrefix("image/") == true, "\(format)")
        }
    }

    /// A strict reading of WebVTT as the index writes it: the header, then cues of a
    /// timing line and one URL with `#xywh`, a blank line after each.
    struct Cue: Equatable {
        var start: Double, end: Double
        var url: String
        var x: Int, y: Int, w: Int, h: Int
    }

    static func parse(_ text: String) throws -> [Cue] {
        var lines = text.components(separatedBy: "\n")[...]
        guard lines.popFirst() == "WEBVTT", lines.popFirst() == "" else { throw TestError("no WEBVTT header") }
        func time(_ s: Substring) throws -> Double {
            let p = s.split(separator: ":")
            guard p.count == 3, p[0].count == 2, p[1].count == 2, p[2].count == 6, let h = Int(p[0]),
                let m = Int(p[1]), let sec = Double(p[2]), m < 60, sec < 60
            else { throw TestError("bad timestamp \(s)") }
            return Double(h * 3600 + m * 60) + sec
        }
        var cues: [Cue] = []
        while let timing = lines.popFirst(), !timing.isEmpty {
            let t = timing.components(separatedBy: " --> ")
            guard t.count == 2, let target = lines.popFirst(), lines.popFirst() == "" else {
                throw TestError("bad cue at \(timing)")
            }
            let parts = target.components(separatedBy: "#xywh=")
            let box = parts.count == 2 ? parts[1].split(separator: ",").compactMap { Int($0) } : []
            guard box.count == 4 else { throw TestError("no #xywh in \(target)") }
            cues.append(
                Cue(
                    start: try time(Substring(t[0])), end: try time(Substring(t[1])), url: parts[0], x: box[0],
                    y: box[1], w: box[2], h: box[3]))
        }
        guard lines.allSatisfy(\.isEmpty) else { throw TestError("text after the cues") }
        return cues
    }

    @Test func aStoryboardHoldsTheFramesAtTheirTimesAndItsIndexCoversTheClip() throws {
        let server = try ServeProcess(samples: dir)
        let query = "src=timed.mp4&w=64&h=36&mode=fill&tiles=4x2&every=0.3&t=0.2&format=png"
        let vtt = try ServiceTests.get(server.port, "/storyboard.vtt?" + query)
        #expect(vtt.status == 200 && vtt.headers["content-type"] == "text/vtt; charset=utf-8")
        let cues = try Self.parse(vtt.text)
        // From 0.2 s every 0.3 s to the end (4 s): 13 tiles, on two sheets of eight.
        #expect(cues.count == 13 && cues.first?.start == 0.2 && cues.last?.end == 4)
        for (a, b) in zip(cues, cues.dropFirst()) { #expect(a.end == b.start, "a gap at \(a.end)") }
        var sheets: [String: RawImage] = [:]
        for (k, cue) in cues.enumerated() {
            let sheet =
                try sheets[cue.url]
                ?? {
                    let r = try ServiceTests.get(server.port, "/" + cue.url)
                    #expect(r.status == 200 && r.headers["content-type"] == "image/png", "\(cue.url): \(r.status)")
                    return try ImageFile.decode(r.body)
                }()
            sheets[cue.url] = sheet
            #expect(sheet.width == 256 && sheet.height == 72, "a sheet is the whole grid")
            #expect(cue.w == 64 && cue.h == 36 && cue.x + cue.w <= sheet.width && cue.y + cue.h <= sheet.height)
            #expect(cue.url.contains("sheet=\(k / 8)"))
            // The tile's middle is the frame shown at its start.
            let p = sheet.pixel(cue.x + 32, cue.y + 18)
            let (red, green) = Self.colour(at: cue.start)
            #expect(abs(Int(p[0]) - red) <= 8 && abs(Int(p[1]) - green) <= 8, "tile \(k) at \(cue.start) s: \(p)")
        }
        #expect(sheets.count == 2)
        // /info says the sheet's size, not a tile's.
        let info = try ServiceTests.get(server.port, "/info?" + query)
        #expect(info.text.contains(#""width": 256, "height": 72"#), "\(info.text)")
        // The last sheet's places past the end stay black.
        let last = try #require(sheets.values.first { $0.pixel(255, 71)[0] < 8 })
        #expect(last.pixel(255, 71)[1] < 8)
    }

    @Test func imgproxysVideoThumbnailTileIsTheStoryboard() throws {
        let server = try ServeProcess(samples: dir, env: ["ASPECT_IMGPROXY_ENABLED": "true"])
        let dialect = try ServiceTests.get(server.port, "/insecure/vtt:0.5:4:2:64:36:0:0:1/plain/timed.mp4@png")
        let native = try ServiceTests.get(
            server.port, "/thumb?src=timed.mp4&w=64&h=36&mode=fill&tiles=4x2&every=0.5&format=png")
        #expect(dialect.status == 200 && dialect.headers["content-type"] == "image/png", "\(dialect.text.prefix(200))")
        let (a, b) = (try ImageFile.decode(dialect.body), try ImageFile.decode(native.body))
        #expect(a.width == 256 && a.height == 72 && a == b)
    }

    @Test func badGridsAreRefusedAndSignedIndexesSignTheirSheets() throws {
        var server = try ServeProcess(samples: dir)
        for (query, says) in [
            ("tiles=21x1", "tiles must be COLSxROWS"), ("tiles=11x10", "limits.maxTiles 100"),
            ("tiles=4x0", "tiles must be"), ("tiles=4x4&frames=4", "give one of them"),
            ("every=1", "add tiles"), ("tiles=2x2&format=mp4", "a storyboard is an image"),
            ("tiles=2x2&every=0.0001", "every must be a decimal"),
        ] {
            let r = try ServiceTests.get(server.port, "/thumb?src=timed.mp4&w=64&" + query)
            #expect(r.status == 400 && r.text.contains(says), "\(query): \(r.status) \(r.text)")
        }
        let sheet = try ServiceTests.get(server.port, "/storyboard.vtt?src=timed.mp4&w=64&tiles=2x2&sheet=1")
        #expect(sheet.status == 400 && sheet.text.contains("no sheet"))
        let still = try ServiceTests.get(server.port, "/storyboard.vtt?src=landscape.jpg&w=64&tiles=2x2")
        #expect(still.status == 400 && still.text.contains("makes a storyboard of a video"))
        server.signal(SIGTERM)
        _ = server.wait(seconds: 10)
        let key = "storyboard-test-key"
        server = try ServeProcess(samples: dir, env: ["ASPECT_SECURITY_SIGNINGKEY": key])
        let params = try QueryParameters.decode("src=timed.mp4&w=64&tiles=2x2&every=0.5")
        let sig = Signer(key: key).signature(path: "/storyboard.vtt", params)
        let index = try ServiceTests.get(
            server.port, "/storyboard.vtt?src=timed.mp4&w=64&tiles=2x2&every=0.5&sig=\(sig)")
        let cues = try Self.parse(index.text)
        #expect(cues.count == 8 && Set(cues.map(\.url)).count == 2)
        for url in Set(cues.map(\.url)) {
            #expect(url.contains("&sig="), "\(url)")
            #expect(try ServiceTests.get(server.port, "/" + url).status == 200, "\(url)")
        }
        #expect(try ServiceTests.get(server.port, "/storyboard.vtt?src=timed.mp4&w=64&tiles=2x2").status == 403)
    }
}

/// The previews and the index in a real browser (Debian's headless Chromium, as the demo
/// page's test): both videos play muted and looping, the index loads through a `<track>`
/// whose cues the page reads back, and the tile a player would show for a moment is the
/// sheet's own crop.
@Suite(.serialized) struct VideoPreviewBrowserTests {
    struct Played: Decodable {
        let id: String
        let readyState: Int
        let width: Int
        let height: Int
        let t0: Double
        let t1: Double
        let paused: Bool
        let error: Int?
    }
    struct ReadCue: Decodable {
        let start: Double
        let end: Double
        let text: String
    }
    struct Tile: Decodable {
        let url: String
        let x: Int, y: Int, w: Int, h: Int
        let png: String
    }
    struct Report: Decodable {
        let videos: [Played]
        let cues: [ReadCue]
        let tile: Tile?
    }

    @Test func thePreviewsPlayAndATrackShowsTheTileForATime() throws {
        let dir = try ServeProcess.sampleFolder("video-browser")
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try ServeProcess(samples: dir)
        let base = "http://127.0.0.1:\(server.port)"
        let preview = "\(base)/thumb?src=clip.mp4&w=320&frames=8"
        let index = "\(base)/storyboard.vtt?src=clip.mp4&w=160&h=90&mode=fill&tiles=4x2&format=png"
        let page = dir.appendingPathComponent("page.html")
        try Data(
            """
            <!doctype html><html><body>
            <video id="mp4" autoplay muted loop playsinline src="\(preview)&format=mp4"></video>
            <video id="webm" autoplay muted loop playsinline src="\(preview)&format=webm"></video>
            <video id="main" muted src="\(preview)&format=mp4"><track id="t" kind="metadata" default src="\(index)"></video>
            <pre id="report">pending</pre>
            <script>
            const sleep = ms => new Promise(r => setTimeout(r, ms));
            async function run() {
              const r = {videos: [], cues: []}, ids = ['mp4', 'webm'];
              for (const id of ids) { try { await document.getElementById(id).play(); } catch (e) {} }
              await sleep(400);
              const t0 = ids.map(id => document.getElementById(id).currentTime);
              await sleep(2000);
              ids.forEach((id, i) => { const v = document.getElementById(id);
                r.videos.push({id, readyState: v.readyState, width: v.videoWidth, height: v.videoHeight,
                               t0: t0[i], t1: v.currentTime, paused: v.paused, error: v.error && v.error.code}); });
              const el = document.getElementById('t'), track = el.track;
              track.mode = 'hidden';
              for (let i = 0; i < 50 && !(track.cues && track.cues.length); i++) await sleep(100);
              r.cues = Array.from(track.cues || []).map(c => ({start: c.startTime, end: c.endTime, text: c.text}));
              // As a player shows the thumbnail for a moment: the cue's sheet, its region.
              const cue = Array.from(track.cues || []).find(c => c.startTime <= 1.2 && 1.2 < c.endTime);
              if (cue) {
                const [url, frag] = cue.text.split('#xywh='), [x, y, w, h] = frag.split(',').map(Number);
                const img = new Image();
                img.src = new URL(url, el.src).href;
                await img.decode();
                const c = document.createElement('canvas');
                c.width = w; c.height = h;
                c.getContext('2d').drawImage(img, x, y, w, h, 0, 0, w, h);
                r.tile = {url: img.src, x, y, w, h, png: c.toDataURL('image/png')};
              }
              document.getElementById('report').textContent = JSON.stringify(r);
            }
            run();
            </script></body></html>
            """.utf8
        ).write(to: page)
        let dom = try DemoPageTests.browser([
            "--autoplay-policy=no-user-gesture-required", "--disable-web-security", "--allow-file-access-from-files",
            "--dump-dom", page.absoluteString,
        ])
        let pre = try #require(
            dom.range(of: #"<pre id="report">(.*?)</pre>"#, options: .regularExpression).map { dom[$0] },
            "no report: \(dom.prefix(300))")
        let json = pre.replacingOccurrences(of: #"<pre id="report">"#, with: "").replacingOccurrences(
            of: "</pre>", with: ""
        )
        .replacingOccurrences(of: "&amp;", with: "&").replacingOccurrences(of: "&lt;", with: "<")
        .replacingOccurrences(of: "&gt;", with: ">")
        let report = try JSONDecoder().decode(Report.self, from: Data(json.utf8))
        #expect(report.videos.count == 2)
        for v in report.videos {
            // Playing: enough data, the planned size, muted time moving on, no error.
            #expect(v.readyState >= 2 && v.width == 320 && v.height == 240 && !v.paused && v.error == nil, "\(v)")
            #expect(v.t1 > v.t0 + 0.5, "\(v.id): \(v.t0) s then \(v.t1) s")
        }
        // The cues the browser read are the index's, in order.
        let served = try VideoPreviewServiceTests.parse(
            try ServiceTests.get(server.port, "/" + index.dropFirst(base.count + 1)).text)
        #expect(report.cues.count == served.count && served.count == 8)
        for (read, cue) in zip(report.cues, served) {
            #expect(abs(read.start - cue.start) < 0.001 && abs(read.end - cue.end) < 0.001)
            #expect(read.text == "\(cue.url)#xywh=\(cue.x),\(cue.y),\(cue.w),\(cue.h)")
        }
        // The tile shown for 1.2 s is the sheet's crop at the cue's place.
        let tile = try #require(report.tile)
        #expect(tile.x == 320 && tile.y == 0 && tile.w == 160 && tile.h == 90, "\(tile.x),\(tile.y)")
        let shown = try ImageFile.decode(
            [UInt8](try #require(Data(base64Encoded: String(tile.png.dropFirst("data:image/png;base64,".count))))))
        let sheet = try ImageFile.decode(
            try ServiceTests.get(server.port, "/" + tile.url.dropFirst(base.count + 1)).body)
        var worst = 0
        for y in 0..<tile.h {
            for x in 0..<tile.w {
                let (a, b) = (shown.pixel(x, y), sheet.pixel(tile.x + x, tile.y + y))
                for c in 0..<3 { worst = max(worst, abs(Int(a[c]) - Int(b[c]))) }
            }
        }
        #expect(shown.width == 160 && shown.height == 90 && worst <= 2, "the tile differs by \(worst)")
    }
}
