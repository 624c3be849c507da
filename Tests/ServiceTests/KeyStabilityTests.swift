import Foundation
import TestSupport
import Testing

/// The cache keys (so the ETags) and the answers of a list of native, imgproxy and thumbor
/// URLs, recorded in Tests/Fixtures/keys.json: a refactoring that moves the dialects or the
/// canonical form must leave every stored result reachable under its old key. A change
/// that means to change what a URL renders raises CacheKey's layout version and records
/// the list again (`ASPECT_RECORD_KEYS=1` on this test writes it).
@Suite struct KeyStabilityTests {
    struct Row: Codable, Equatable {
        var url: String
        var accept: String?
        var status: Int
        var etag: String?
        var answer: String
    }

    static let accepts: [String?] = [nil, "image/avif,image/webp,*/*"]

    static let urls: [String] = [
        // Native.
        "/thumb?src=landscape.jpg&w=300",
        "/thumb?src=landscape.jpg&h=200&dpr=2",
        "/thumb?src=landscape.jpg&w=300&ratio=4:3&mode=fill",
        "/thumb?src=landscape.jpg&w=300&h=225&mode=fill&format=jpeg",
        "/thumb?src=landscape.jpg&w=300&h=300&mode=fill&gravity=north",
        "/thumb?src=landscape.jpg&w=300&h=300&mode=fill&gravity=focus&fx=0.2&fy=0.7",
        "/thumb?src=landscape.jpg&w=300&h=300&mode=pad&bg=ff0000",
        "/thumb?src=landscape.jpg&w=300&h=100&mode=stretch&format=png",
        "/thumb?src=landscape.jpg&w=200&ratio=1:1&mode=fill&shape=circle",
        "/thumb?src=landscape.jpg&w=200&h=100&shape=rounded&radius=12&format=webp",
        "/thumb?src=landscape.jpg&w=300&crop=0.1,0.1,0.5,0.5&rotate=90&flip=h",
        "/thumb?src=landscape.jpg&w=300&blur=2&q=60",
        "/thumb?src=landscape.jpg&w=300&sharpen=1&format=avif",
        "/thumb?src=landscape.jpg&w=300&pixelate=8",
        "/thumb?src=landscape.jpg&w=3000&h=3000&extend=1&bg=00ff00",
        "/thumb?src=landscape.jpg&w=300&padding=10,20,30,40",
        "/thumb?src=landscape.jpg&w=300&trim=10",
        "/thumb?src=landscape.jpg&w=300&q=auto",
        "/thumb?src=landscape.jpg&w=300&maxbytes=20000",
        "/thumb?src=logo.png&w=100",
        "/thumb?src=logo.png&w=100&format=jpeg",
        "/thumb?src=logo.png&w=100&h=50&mode=fill&gravity=smart",
        "/thumb?src=logo.png&w=100&h=50&mode=fill&gravity=entropy&upscale=1",
        // imgproxy.
        "/insecure/rs:fill:300:225/plain/landscape.jpg",
        "/insecure/rs:fit:300:300/plain/landscape.jpg",
        "/insecure/rs:fill:300:300:1/g:sm/plain/landscape.jpg",
        "/insecure/rs:fill-down:3000:200/plain/landscape.jpg",
        "/insecure/rs:force:300:100/plain/landscape.jpg@webp",
        "/insecure/rs:auto:300:500/plain/landscape.jpg",
        "/insecure/w:300/h:200/rt:fill/g:nowe:10:20/plain/landscape.jpg",
        "/insecure/s:300:200/g:fp:0.3:0.6/plain/landscape.jpg",
        "/insecure/w:300/mw:400/plain/landscape.jpg",
        "/insecure/w:300/z:1.5/dpr:2/plain/landscape.jpg",
        "/insecure/rs:fit:3000:3000/el:1/ex:1:so:10:20/bg:ff00ff/plain/landscape.jpg",
        "/insecure/rs:fit:300:300/exar:1/plain/landscape.jpg",
        "/insecure/c:1000:500:ce/rs:fill:200:200/plain/landscape.jpg",
        "/insecure/t:10:ff0000:1:1/w:300/plain/landscape.jpg",
        "/insecure/pd:10:20/w:300/plain/landscape.jpg",
        "/insecure/ar:0/rot:90/fl:1:0/w:300/plain/landscape.jpg",
        "/insecure/bl:3/w:300/q:50/plain/landscape.jpg",
        "/insecure/sh:1/pix:5/w:300/plain/landscape.jpg",
        "/insecure/w:300/fq:jpeg:40:webp:60/plain/landscape.jpg",
        "/insecure/w:300/mb:30000/plain/landscape.jpg",
        "/insecure/w:300/kcr:1/scp:0/plain/landscape.jpg",
        "/insecure/w:100/plain/logo.png",
        "/insecure/w:100/f:jpg/plain/logo.png",
        "/insecure/w:100/plain/logo.png@avif",
        "/insecure/rs:fill:100:100/g:soea/plain/logo.png",
        "/insecure/w:300/bGFuZHNjYXBlLmpwZw.webp",
        // thumbor.
        "/unsafe/300x200/landscape.jpg",
        "/unsafe/300x0/landscape.jpg",
        "/unsafe/x/landscape.jpg",
        "/unsafe/origx100/landscape.jpg",
        "/unsafe/fit-in/300x200/landscape.jpg",
        "/unsafe/full-fit-in/300x200/landscape.jpg",
        "/unsafe/adaptive-fit-in/200x300/landscape.jpg",
        "/unsafe/-300x200/landscape.jpg",
        "/unsafe/300x-200/filters:rotate(90)/landscape.jpg",
        "/unsafe/300x200/left/top/landscape.jpg",
        "/unsafe/300x200/right/bottom/landscape.jpg",
        "/unsafe/300x200/smart/landscape.jpg",
        "/unsafe/100x100:900x700/300x200/landscape.jpg",
        "/unsafe/trim/300x200/landscape.jpg",
        "/unsafe/fit-in/300x300/filters:fill(red)/landscape.jpg",
        "/unsafe/fit-in/300x300/filters:fill(blur)/landscape.jpg",
        "/unsafe/fit-in/300x300/filters:fill(auto)/logo.png",
        "/unsafe/fit-in/300x300/filters:fill(00ff00,1)/logo.png",
        "/unsafe/300x200/filters:grayscale()/landscape.jpg",
        "/unsafe/300x200/filters:blur(3)/landscape.jpg",
        "/unsafe/300x200/filters:blur(0)/landscape.jpg",
        "/unsafe/300x200/filters:quality(40):format(webp)/landscape.jpg",
        "/unsafe/300x200/filters:format(tiff)/landscape.jpg",
        "/unsafe/300x200/filters:round_corner(20,255,255,255)/landscape.jpg",
        "/unsafe/300x200/filters:background_color(ff0000)/logo.png",
        "/unsafe/300x200/filters:max_bytes(20000)/landscape.jpg",
        "/unsafe/300x200/filters:no_upscale()/logo.png",
        "/unsafe/1200x900/filters:upscale()/logo.png",
        "/unsafe/300x200/filters:focal(100x100:300x300)/landscape.jpg",
        "/unsafe/300x200/filters:sharpen(1,1,true)/landscape.jpg",
        "/unsafe/300x200/filters:strip_exif():strip_icc()/landscape.jpg",
    ]

    static func answers() throws -> [Row] {
        let h = try Harness {
            $0.imgproxy.enabled = true
            $0.thumbor.enabled = true
        }
        var rows: [Row] = []
        for url in urls {
            for accept in accepts {
                let a = h.get(url, headers: accept.map { [("Accept", $0)] } ?? [])
                rows.append(Row(url: url, accept: accept, status: a.status, etag: a.headers["ETag"], answer: a.text))
            }
        }
        return rows
    }

    @Test func everyURLKeepsItsKeyAndItsAnswer() throws {
        let now = try Self.answers()
        if ProcessInfo.processInfo.environment["ASPECT_RECORD_KEYS"] == "1" {
            let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fixtures/keys.json")
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try encoder.encode(now).write(to: path)
        }
        let recorded = try #require(fixture("keys.json", as: [Row].self), "Tests/Fixtures/keys.json")
        #expect(recorded.count == now.count)
        for (was, is_) in zip(recorded, now) {
            #expect(was == is_, "\(is_.url) Accept: \(is_.accept ?? "none")")
        }
        // The list says something: most URLs are answered, and the dialects' plain URLs
        // share the native entries they mean.
        #expect(now.filter { $0.status == 200 }.count > now.count * 9 / 10)
        let etags = Dictionary(now.map { ($0.url + ($0.accept ?? ""), $0.etag) }, uniquingKeysWith: { a, _ in a })
        #expect(
            etags["/insecure/rs:fill:300:225/plain/landscape.jpg"]
                == etags["/thumb?src=landscape.jpg&w=300&h=225&mode=fill&format=jpeg"])
    }
}
