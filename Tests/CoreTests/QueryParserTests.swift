import TestSupport
import Testing

@testable import Core

@Suite struct RatioTests {
    static let good: [(String, Double)] = [
        ("4:3", 4.0 / 3), ("16:9", 16.0 / 9), ("1.5", 1.5), ("1", 1), ("1:1", 1), ("1:1000", 0.001),
        ("1000:1", 1000), ("2.5:1", 2.5), ("0.5", 0.5), ("10000", 10000), ("1:10000", 0.0001),
    ]

    @Test(arguments: good)
    func accepts(text: String, value: Double) throws {
        #expect(try Ratio.parse(text).value == value)
    }

    @Test(arguments: [
        "0:3", "4:0", "-1", "nan", "inf", "1e309", "4:3:2", "", "0", ":", "4:", ":3", " 4:3", "4 :3",
        "+1", "1.", ".5", "0x10", "1e3", "10001", "1:10001", "4/3", "４:３", "NaN", "Infinity",
        String(repeating: "9", count: 400), "1:" + String(repeating: "9", count: 400),
    ])
    func refuses(text: String) {
        #expect(throws: AspectError.self) { try Ratio.parse(text) }
        do throws(AspectError) {
            _ = try Ratio.parse(text)
        } catch {
            #expect(error.code == .badParam)
            #expect(error.message.hasPrefix("ratio must be"))
        }
    }
}

@Suite struct QueryParserTests {
    func parse(_ q: String, _ limits: RequestLimits = defaultLimits) throws(AspectError) -> ThumbRequest {
        try ThumbRequest.parse(query: q, limits: limits)
    }

    func error(_ q: String) -> AspectError? {
        do throws(AspectError) {
            _ = try parse(q)
            return nil
        } catch {
            return error
        }
    }

    @Test func everyParameter() throws {
        let r = try parse(
            "src=photos%2Fcat%20one.jpg&w=300&h=200&mode=fill&gravity=focus&fx=0.25&fy=1&upscale=true&dpr=2.5"
                + "&shape=rounded&radius=12&bg=FF8800&format=webp&q=75&page=7&sig=abc-_09")
        #expect(r.src == "photos/cat one.jpg")
        #expect(r.width == 300 && r.height == 200 && r.ratio == nil)
        #expect(r.mode == .fill && r.gravity == .focus && r.focusX == 0.25 && r.focusY == 1)
        #expect(r.upscale && r.dpr == 2.5)
        #expect(r.shape == .rounded && r.radius == 12)
        #expect(r.background == Color(red: 255, green: 136, blue: 0))
        #expect(r.format == .webp && r.quality == 75 && r.signature == "abc-_09")
        #expect(r.page == 7)
    }

    @Test func defaults() throws {
        let r = try parse("src=a.jpg")
        #expect(r == ThumbRequest(src: "a.jpg"))
        #expect(r.mode == .fit && r.gravity == .center && !r.upscale && r.dpr == 1 && r.format == .auto)
        #expect(r.focusX == 0.5 && r.focusY == 0.5 && r.shape == nil && r.background == nil && r.quality == nil)
    }

    @Test(arguments: [("1", true), ("true", true), ("0", false), ("false", false)])
    func upscaleSpellings(text: String, value: Bool) throws {
        #expect(try parse("src=a.jpg&upscale=\(text)").upscale == value)
    }

    @Test func plusIsASpaceAndTrailingAmpersandIsFine() throws {
        #expect(try parse("src=my+cat.jpg&").src == "my cat.jpg")
        #expect(try parse("&&src=a.jpg&&w=3").width == 3)
        #expect(try parse("src=a%2Bb.jpg").src == "a+b.jpg")
    }

    struct Bad: Sendable, CustomTestStringConvertible {
        let query: String
        let code: AspectError.Code
        let message: String
        init(_ query: String, _ message: String, _ code: AspectError.Code = .badParam) {
            self.query = query
            self.message = message
            self.code = code
        }
        var testDescription: String { query }
    }

    static let bad: [Bad] = [
        Bad("w=300", "src is required"),
        Bad("src=a.pdf&page=0", "page must be an integer from 1 to 100000, got '0'"),
        Bad("src=a.pdf&page=1.5", "page must be an integer from 1 to 100000, got '1.5'"),
        Bad("src=a.pdf&page=100001", "page must be an integer from 1 to 100000, got '100001'"),
        Bad("src=a.jpg&w=abc", "w must be an integer from 1 to 4096, got 'abc'"),
        Bad("src=a.jpg&w=0", "w must be an integer from 1 to 4096, got '0'"),
        Bad("src=a.jpg&w=4097", "w must be an integer from 1 to 4096, got '4097'"),
        Bad("src=a.jpg&w=-5", "w must be an integer from 1 to 4096, got '-5'"),
        Bad("src=a.jpg&w=3.0", "w must be an integer from 1 to 4096, got '3.0'"),
        Bad("src=a.jpg&w=9223372036854775808", "w must be an integer from 1 to 4096"),
        Bad("src=a.jpg&w=" + String(repeating: "9", count: 400), "w must be an integer from 1 to 4096, got '9999"),
        Bad("src=a.jpg&h=", "h is empty"),
        Bad("src=a.jpg&h", "h is empty"),
        Bad("src=a.jpg&w=1&w=2", "w is given more than once"),
        Bad("src=a.jpg&src=b.jpg", "src is given more than once"),
        Bad("src=a.jpg&width=3", "unknown parameter 'width'; /thumb takes src, w, h"),
        Bad("src=a.jpg&W=3", "unknown parameter 'W'"),
        Bad("src=a.jpg&w=1&h=1&ratio=1", "w, h and ratio are all given; give at most two of them"),
        Bad("src=a.jpg&ratio=0:3", "ratio must be W:H"),
        Bad("src=a.jpg&mode=crop", "mode must be one of fit, fill, pad, stretch, got 'crop'"),
        Bad("src=a.jpg&gravity=up", "gravity must be one of center, north"),
        Bad("src=a.jpg&mode=pad&gravity=smart", "gravity=smart only applies to mode=fill, got mode=pad"),
        Bad("src=a.jpg&gravity=focus", "gravity=focus only applies to mode=fill, got mode=fit"),
        Bad("src=a.jpg&mode=fill&fx=0.3", "fx and fy set the focal point of gravity=focus"),
        Bad("src=a.jpg&mode=fill&gravity=focus&fx=1.5", "fx must be a decimal from 0 to 1, got '1.5'"),
        Bad("src=a.jpg&mode=fill&gravity=focus&fy=nan", "fy must be a decimal from 0 to 1, got 'nan'"),
        Bad("src=a.jpg&upscale=yes", "upscale must be 0, 1, false or true, got 'yes'"),
        Bad("src=a.jpg&dpr=0.5", "dpr must be a decimal from 1 to 4, got '0.5'"),
        Bad("src=a.jpg&dpr=5", "dpr must be a decimal from 1 to 4, got '5'"),
        Bad("src=a.jpg&dpr=1e0", "dpr must be a decimal from 1 to 4, got '1e0'"),
        Bad("src=a.jpg&shape=star", "shape must be one of circle, capsule, rounded, got 'star'"),
        Bad("src=a.jpg&radius=4", "radius is the corner radius of shape=rounded"),
        Bad("src=a.jpg&shape=rounded&radius=-1", "radius must be an integer from 0 to 4096, got '-1'"),
        Bad("src=a.jpg&bg=fff", "bg must be a hex colour RRGGBB or RRGGBBAA"),
        Bad("src=a.jpg&bg=%23ffffff", "bg must be a hex colour RRGGBB or RRGGBBAA (ff8800, 00000080), got '#ffffff'"),
        Bad("src=a.jpg&bg=gggggg", "bg must be a hex colour"),
        Bad(
            "src=a.jpg&format=bmp",
            "format must be one of auto, best, jpeg, png, webp, avif, jxl, gif, tiff, mp4, webm, got 'bmp'"
        ),
        Bad("src=a.jpg&q=0", "q must be an integer from 1 to 100, got '0'"),
        Bad("src=a.jpg&q=101", "q must be an integer from 1 to 100, got '101'"),
        Bad("src=a.jpg&sig=a%2Fb", "sig must be base64url"),
        Bad("src=a.jpg&w=%zz", "the value of 'w' has a broken percent escape"),
        Bad("src=a.jpg&w=3%", "the value of 'w' has a broken percent escape"),
        Bad("src=%ff.jpg", "the value of 'src' is not valid UTF-8"),
        Bad("src=../etc/passwd", "'..' may not appear in it", .forbiddenPath),
        Bad("src=a/../../b.jpg", "'..' may not appear in it", .forbiddenPath),
        Bad("src=%2e%2e%2fsecret.jpg", "'..' may not appear in it", .forbiddenPath),
        Bad("src=%2Fetc%2Fpasswd", "it must be relative to the image root, not absolute", .forbiddenPath),
        Bad("src=a%00.jpg", "it contains a control character", .forbiddenPath),
        Bad("src=..%5Csecret.jpg", "backslashes are not path separators here", .forbiddenPath),
        Bad("src=.hidden.jpg", "names starting with '.' are not served", .forbiddenPath),
        Bad("src=dir/.git/config", "names starting with '.' are not served", .forbiddenPath),
        Bad("src=a//b.jpg", "it has an empty segment", .forbiddenPath),
        Bad("src=" + String(repeating: "a", count: 1025), "longer than 1024 bytes", .forbiddenPath),
    ]

    @Test(arguments: bad)
    func refuses(_ bad: Bad) {
        guard let e = error(bad.query) else {
            Issue.record("\(bad.query) was accepted")
            return
        }
        #expect(e.code == bad.code)
        #expect(e.message.contains(bad.message), "got: \(e.message)")
        #expect(e.message.count < 400, "messages stay short: \(e.message.count)")
    }

    @Test func limitsComeFromConfiguration() throws {
        let small = RequestLimits(maxDimension: 100, maxDpr: 2)
        #expect(throws: AspectError.self) { try parse("src=a.jpg&w=101", small) }
        #expect(throws: AspectError.self) { try parse("src=a.jpg&dpr=2.5", small) }
        #expect(try parse("src=a.jpg&w=100&dpr=2", small).width == 100)
        #expect(error("src=a.jpg&w=101")?.message == nil)  // the default allows it
    }

    @Test func randomStringsNeverTrap() {
        // Bytes weighted towards what the parser looks at.
        let alphabet =
            Array("src=w&h=ratio:mode=fill%2e%2F%00%zz+.-_~0123456789abcdefABCDEF:;/\\?#é\u{0}\u{7F}".utf8)
            + Array(0...255).map(UInt8.init)
        var g = SeededRandom(seed: 42)
        var accepted = 0
        for _ in 0..<20_000 {
            let n = Int.random(in: 0...80, using: &g)
            var bytes = (0..<n).map { _ in alphabet.randomElement(using: &g) ?? 0 }
            if Bool.random(using: &g) { bytes = Array("src=a.jpg&".utf8) + bytes }
            let query = String(decoding: bytes, as: UTF8.self)
            do throws(AspectError) {
                let r = try parse(query)
                accepted += 1
                // Whatever is accepted has a canonical form that parses back to itself.
                let again = try parse(r.canonical)
                #expect(again.canonical == r.canonical, "\(query)")
            } catch {
                #expect(!error.message.isEmpty)
            }
        }
        #expect(accepted > 100, "the generator must reach valid requests too")
    }

    @Test func mutatedValidQueriesNeverTrap() {
        let corpus = [
            "src=a.jpg&w=300&ratio=4:3&mode=fill", "src=b/c.png&h=200&mode=pad&gravity=south&bg=00000080",
            "src=x.jpg&w=64&h=64&mode=fill&gravity=focus&fx=0.2&fy=0.8&shape=circle&dpr=3&format=webp&q=70",
        ]
        var g = SeededRandom(seed: 7)
        for _ in 0..<20_000 {
            var bytes = Array((corpus.randomElement(using: &g) ?? "").utf8)
            for _ in 0..<Int.random(in: 1...4, using: &g) where !bytes.isEmpty {
                let i = Int.random(in: 0..<bytes.count, using: &g)
                switch Int.random(in: 0..<3, using: &g) {
                case 0: bytes[i] = UInt8.random(in: 0...255, using: &g)
                case 1: bytes.remove(at: i)
                default: bytes.insert(bytes[Int.random(in: 0..<bytes.count, using: &g)], at: i)
                }
            }
            let query = String(decoding: bytes, as: UTF8.self)
            if let r = try? parse(query) {
                // An accepted request always plans or gives a typed error, never a trap.
                _ = planOrCode(size(Int.random(in: 1...5000, using: &g), Int.random(in: 1...5000, using: &g)), r)
            }
        }
    }
}
