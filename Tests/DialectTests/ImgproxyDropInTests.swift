import Foundation
import TestSupport
import Testing

@testable import Core
@testable import Imgproxy

/// A switched imgproxy site must not notice (SPEC: imgproxy URLs): the path read as sent
/// and decoded once, imgproxy's arguments accepted, and one canonical form (so one cache
/// entry and one ETag) with the native request that means the same on the source.
@Suite struct ImgproxyDropInTests {
    static let limits = RequestLimits(maxDimension: 4096, maxDpr: 8)
    static let folder = ImgproxyURL.Settings(root: .folder("/srv/images"))

    static func parse(_ path: String, settings: ImgproxyURL.Settings = folder) throws(AspectError) -> ImgproxyURL {
        try ImgproxyURL.parse(path: path, settings: settings, limits: limits, now: 1_700_000_000)
    }

    static func source(_ w: Int, _ h: Int, _ format: String = "jpeg", alpha: Bool = false) -> SourceDescription {
        SourceDescription(size: Size(width: w, height: h), hasAlpha: alpha, format: format, bytes: 1000)
    }

    /// The canonical form the dialect URL is keyed by on `source`, and the native one's.
    static func canonicals(_ path: String, _ query: String, on source: SourceDescription) throws -> (String, String) {
        let settled = ImgproxyURL.settle(try parse(path).request, source: source, limits: limits)
        return (settled.canonical, try ThumbRequest.parse(query: query, limits: limits).canonical)
    }

    // options/parser/processing_options_test.go and handlers/path_test.go, with escapes.

    @Test func thePathIsDecodedOnce() throws {
        // `%25` is a percent sign: a%2541.jpg is the file "a%41.jpg", not "aA.jpg".
        #expect(try Self.parse("/insecure/w:50/plain/a%2541.jpg").request.src == "a%41.jpg")
        #expect(try Self.parse("/insecure/w:50/plain/sub/dir/x%20y.jpg").request.src == "sub/dir/x y.jpg")
        #expect(try Self.parse("/insecure/plain/caf%C3%A9%2Bcr%C3%A8me.jpg@png").request.src == "café+crème.jpg")
        // A plus is a plus in a path, never a space.
        #expect(try Self.parse("/insecure/plain/a+b.jpg").request.src == "a+b.jpg")
        // The signature covers the path as sent.
        #expect(try Self.parse("/sig/w:50/plain/x%20y.jpg").signedPath == "/w:50/plain/x%20y.jpg")
    }

    /// imgproxy's `RedenormalizePath` (handlers/path.go), its `TestRedenormalizePath…`
    /// table (handlers/path_test.go) and two of ours: what proxies do to a URL undone.
    /// imgproxy's answers have no leading `/`; the dialect keeps one.
    @Test(arguments: [
        ("plain/http:/example.com/image.jpg", "plain/http://example.com/image.jpg"),
        ("plain/https:/example.com/image.jpg", "plain/https://example.com/image.jpg"),
        ("plain/local:/image.jpg", "plain/local:///image.jpg"),
        ("/rs:fill:300:200/plain/http:/example.com/image.jpg", "rs:fill:300:200/plain/http://example.com/image.jpg"),
        ("/plain/http://example.com/image.jpg", "plain/http://example.com/image.jpg"),
        ("/rs:fill:300:200/plain/example.com/image.jpg", "rs:fill:300:200/plain/example.com/image.jpg"),
        ("", ""), ("/", ""), ("/http:/example.com/image.jpg", "http:/example.com/image.jpg"),
        ("/plain/example.com/image.jpg", "plain/example.com/image.jpg"), ("/plain/http:", "plain/http:"),
        ("/plain/http:/test", "plain/http://test"),
        // PathWithOptionsSeparatorUnescaping…, from TestParsePath.
        ("/rs%3Afill%3A300%3A200/plain/https://example.com/a.jpg", "rs:fill:300:200/plain/https://example.com/a.jpg"),
        ("/rs%3Afill%3A300%3A200/abc/abc", "rs:fill:300:200/abc/abc"),
        // Ours: an escaped colon in a plain source is the file's, and stays escaped.
        ("/plain/a%3Ab.jpg", "plain/a%3Ab.jpg"), ("/w:10/YS5qcGc", "w:10/YS5qcGc"),
    ])
    func proxiesNormalisationIsUndone(sent: String, read: String) {
        #expect(ImgproxyURL.redenormalized(sent) == "/" + read)
    }

    /// imgproxy's `TestParsePath` (handlers/path_test.go): the signature segment and the
    /// path it signs; a target with no path after the signature is a 404.
    @Test func theSignatureAndItsPath() throws {
        let (sig, path) = try ImgproxyURL.split("/dummy_signature/rs:fill:300:200/plain/http://example.com/image.jpg")
        #expect(sig == "dummy_signature" && path == "/rs:fill:300:200/plain/http://example.com/image.jpg")
        for bad in ["/invalid_path_without_slash", "/", "/signature_only", "/signature_only/"] {
            #expect(throws: AspectError.self, "\(bad)") { try ImgproxyURL.split(bad) }
        }
    }

    @Test func localSourcesAreUnderTheRoot() throws {
        #expect(try Self.parse("/insecure/w:50/plain/local:///land.jpg").request.src == "land.jpg")
        #expect(try Self.parse("/insecure/w:50/plain/local:/land.jpg").request.src == "land.jpg")
    }

    /// `trim`'s whole argument list, as imgproxy's `applyTrimOption` reads it.
    @Test func trimTakesImgproxysArguments() throws {
        func trim(_ o: String) throws -> Trim? { try Self.parse("/insecure/\(o)/plain/a.png").request.trim }
        #expect(try trim("t:150") == Trim(threshold: 150))
        #expect(try trim("trim:1:ff0000") == Trim(threshold: 1, color: Color(red: 255, green: 0, blue: 0)))
        #expect(
            try trim("t:10:ffffff:1:0")
                == Trim(threshold: 10, color: .white, equalHorizontal: true, equalVertical: false))
        #expect(try trim("t:5::1:1") == Trim(threshold: 5, equalHorizontal: true, equalVertical: true))
        #expect(try trim("t:") == nil)
        for bad in ["t:-1", "t:5:zzzzzz", "t:5::maybe", "t:1:2:3:4:5"] {
            #expect(throws: AspectError.self, "\(bad)") { try trim(bad) }
        }
        // The native `trim` is the threshold alone, and the same canonical form.
        // The trimmed size is unknown until the render: only a geometry the same on any
        // source is said natively.
        let png = Self.source(400, 300, "png")
        let (dialect, native) = try Self.canonicals(
            "/insecure/t:12/w:100/plain/a.png", "src=a.png&trim=12&w=100&format=png", on: png)
        #expect(dialect == native)
        let (cropped, _) = try Self.canonicals(
            "/insecure/t:12/c:50:50/w:100/plain/a.png", "src=a.png&trim=12&w=100&format=png", on: png)
        #expect(cropped.contains("imgproxy="))
        #expect(try Self.parse("/insecure/t:12:ff0000/plain/a.png@png").request.canonical.contains("12%3Aff0000"))
    }

    @Test func autoRotateAndKeepCopyrightArePerRequest() throws {
        let off = try Self.parse("/insecure/ar:0/w:50/plain/a.jpg").request
        #expect(!off.autoRotate && off.reading.autoRotate == false)
        #expect(try Self.parse("/insecure/ar:1/w:50/plain/a.jpg").request.autoRotate)
        #expect(off.canonical != (try Self.parse("/insecure/w:50/plain/a.jpg").request.canonical))
        #expect(try Self.parse("/insecure/kcr:1/plain/a.jpg").request.keepCopyright == true)
        // The server's own setting is no setting: one entry with the URL that omits it.
        #expect(try Self.parse("/insecure/kcr:0/plain/a.jpg").request.keepCopyright == nil)
        let keeping = ImgproxyURL.Settings(root: .folder("/"), keepCopyright: true)
        #expect(try Self.parse("/insecure/kcr:0/plain/a.jpg", settings: keeping).request.keepCopyright == false)
        #expect(try Self.parse("/insecure/kcr:1/plain/a.jpg", settings: keeping).request.keepCopyright == nil)
    }

    /// imgproxy's `determineOutputFormat` with its default preferred formats.
    @Test func noFormatKeepsTheSources() throws {
        let url = try Self.parse("/insecure/w:60/plain/square.png").request
        #expect(url.format == .source)
        func kept(_ s: SourceDescription, _ options: String = "w:60") throws -> FormatChoice {
            ImgproxyURL.settle(try Self.parse("/insecure/\(options)/plain/a").request, source: s, limits: Self.limits)
                .format
        }
        #expect(try kept(Self.source(100, 100, "png")) == .png)
        #expect(try kept(Self.source(100, 100, "png", alpha: true)) == .png)
        #expect(try kept(Self.source(100, 100, "jpeg")) == .jpeg)
        #expect(try kept(Self.source(100, 100, "gif")) == .gif)
        #expect(try kept(Self.source(100, 100, "webp")) == .jpeg)
        #expect(try kept(Self.source(100, 100, "webp", alpha: true)) == .png)
        #expect(try kept(Self.source(100, 100, "heif")) == .jpeg)
        // A border with no background may be transparent: PNG; with one, JPEG.
        #expect(try kept(Self.source(100, 100, "webp"), "rs:fit:200:200:1:1") == .png)
        #expect(try kept(Self.source(100, 100, "webp"), "rs:fit:200:200:1:1/bg:ffffff") == .jpeg)
        var animated = Self.source(100, 100, "webp")
        animated.frames = 4
        #expect(try kept(animated) == .gif)
        // `@png` or `f:` wins; `/thumb` never takes `source`.
        #expect(try Self.parse("/insecure/plain/a.webp@png").request.format == .png)
        // imgproxy Pro's sprite sheet: the native storyboard.
        let tile = try Self.parse("/insecure/vtt:5:4:3:160:90:0:0:1:0.3:0.7/plain/v.mp4").request
        #expect(tile.tiles == Grid(columns: 4, rows: 3) && tile.every == 5)
        #expect(try Self.parse("/insecure/video_thumbnail_tile:-1:2:2:100:0/plain/v.mp4").request.every == nil)
        #expect(throws: AspectError.self) { try Self.parse("/insecure/vtt:5:4:3:160:90:0:1/plain/v.mp4") }
        #expect(throws: AspectError.self) { try Self.parse("/insecure/vtt:5:21:3:160:90/plain/v.mp4") }
        // imgproxy Pro's `best`: the native format=best.
        #expect(try Self.parse("/insecure/plain/a.webp@best").request.format == .best)
        #expect(try Self.parse("/insecure/f:best/plain/a.jpg").request.format == .best)
        #expect(throws: AspectError.self) { try ThumbRequest.parse(query: "src=a&format=source", limits: Self.limits) }
    }

    /// The cases: each dialect URL and the native request it means have one
    /// canonical form on a 6028×3391 JPEG (the team's big.jpg).
    @Test(arguments: [
        ("rs:fill:300:225/g:ce/plain/big.jpg@jpg", "w=300&h=225&mode=fill&format=jpeg"),
        ("rs:force:300:225/plain/big.jpg@jpg", "w=300&h=225&mode=stretch&format=jpeg"),
        ("rs:fill:300:225/g:nowe/plain/big.jpg@jpg", "w=300&h=225&mode=fill&gravity=northwest&format=jpeg"),
        ("rs:fill:300:225/g:soea/plain/big.jpg", "w=300&h=225&mode=fill&gravity=southeast&format=jpeg"),
        ("rs:fill:300:225/g:fp:0.3:0.6/plain/big.jpg", "w=300&h=225&mode=fill&gravity=focus&fx=0.3&fy=0.6&format=jpeg"),
        ("rs:fill:300:225/g:sm/plain/big.jpg", "w=300&h=225&mode=fill&gravity=smart&format=jpeg"),
        ("rs:fill:300:225/dpr:2/plain/big.jpg", "w=300&h=225&mode=fill&dpr=2&format=jpeg"),
        ("rs:fit:300:225/pd:10/bg:ff0000/plain/big.jpg", "w=300&h=225&padding=10&bg=ff0000&format=jpeg"),
        ("c:0.5:0.5:nowe/rs:fit:300:300/plain/big.jpg", "w=300&h=300&crop=0,0,0.5,0.5&format=jpeg"),
        ("rs:fit:8000:8000/ex:1/plain/big.jpg@png", "w=8000&h=8000&extend=1&format=png"),
        ("rs:fit:4000:4000:0:1:no/plain/big.jpg@png", "w=4000&h=4000&extend=1&gravity=north&format=png"),
        ("rs:auto:300:225/plain/big.jpg@jpg", "w=300&h=225&mode=fill&format=jpeg"),
        ("rs:auto:225:300/plain/big.jpg@jpg", "w=225&h=300&format=jpeg"),
        ("w:50/exp:0/plain/local:///big.jpg", "w=50&format=jpeg"),
    ])
    func oneCanonicalForm(dialect: String, native: String) throws {
        let big = Self.source(6028, 3391)
        let path = "/insecure/" + dialect.replacingOccurrences(of: "big.jpg", with: "big.jpg")
        let query = "src=big.jpg&" + native
        let limits = RequestLimits(maxDimension: 8192, maxDpr: 8)
        let settled = ImgproxyURL.settle(
            try ImgproxyURL.parse(path: path, settings: Self.folder, limits: limits, now: 0).request, source: big,
            limits: limits)
        #expect(settled.canonical == (try ThumbRequest.parse(query: query, limits: limits).canonical), "\(dialect)")
    }

    /// A watermark that was not read is the same error for both planners, never dropped
    /// in silence by one of them.
    @Test func anUnreadWatermarkIsAnErrorForBothPlanners() throws {
        var g = ImgproxyGeometry()
        g.width = 100
        g.watermark = ImgproxyWatermark(name: "logo", opacity: 1, position: ImgproxyGravity(), scale: 0)
        var limits = Self.limits
        limits.watermarks = ["logo": Watermark(src: "logo.png")]
        #expect(throws: AspectError.self) {
            try g.plan(
                source: Size(width: 400, height: 300), request: ThumbRequest(src: "a"), isVector: false, limits: limits)
        }
        var native = ThumbRequest(src: "a")
        native.watermark = "logo"
        #expect(throws: AspectError.self) {
            try Geometry.plan(source: Size(width: 400, height: 300), request: native, limits: limits)
        }
    }

    /// Native `extend` places its padding by `gravity`, so gravity is part of the key.
    @Test func extendsGravityIsInTheKey() throws {
        func key(_ q: String) throws -> String { try ThumbRequest.parse(query: q, limits: Self.limits).canonical }
        let base = "src=x.png&w=400&h=400&mode=fit&extend=1&bg=0000ff"
        #expect(try key(base + "&gravity=north") != key(base))
        #expect(try key(base + "&gravity=center") == key(base))
        // Without extend, fit has no use for it: one entry.
        #expect(try key("src=x.png&w=400&h=400&gravity=north") == key("src=x.png&w=400&h=400"))
        let plan = try Geometry.plan(
            source: Size(width: 200, height: 100),
            request: ThumbRequest.parse(query: base + "&gravity=southeast", limits: Self.limits), limits: Self.limits)
        #expect(plan.extended == Rect(x: 200, y: 300, width: 200, height: 100))
    }

    /// For random dialect URLs of the kinds the native API can say, on random sources:
    /// the dialect always plans imgproxy's sizes, and where the test's own model says the
    /// native request means the same (and the two planners agree on the size), the two
    /// have one canonical form, so one key and one ETag.
    @Test func randomURLsShareTheNativeForm() throws {
        var rng = SeededRandom(seed: 35)
        let kinds = ["fit", "fill", "fill-down", "force", "auto"]
        let gravities: [(String, String)] = [
            ("ce", "center"), ("no", "north"), ("so", "south"), ("ea", "east"), ("we", "west"),
            ("noea", "northeast"), ("nowe", "northwest"), ("soea", "southeast"), ("sowe", "southwest"),
            ("sm", "smart"), ("fp:0.25:0.75", "focus&fx=0.25&fy=0.75"),
        ]
        var shared = 0
        var planErrors: [String] = []
        var overLimit = 0
        for _ in 0..<3000 {
            let source = Self.source(Int.random(in: 40...3000, using: &rng), Int.random(in: 40...3000, using: &rng))
            var kind = kinds.randomElement(using: &rng) ?? "fit"
            let w = Bool.random(using: &rng) ? Int.random(in: 1...900, using: &rng) : 0
            let h = w == 0 || Bool.random(using: &rng) ? Int.random(in: 1...900, using: &rng) : 0
            let enlarge = Int.random(in: 0..<4, using: &rng) == 0
            let gravity = gravities.randomElement(using: &rng) ?? gravities[0]
            let dpr = [1, 1, 2, 3].randomElement(using: &rng) ?? 1
            let rotate = [0, 0, 90, 180, 270].randomElement(using: &rng) ?? 0
            let q = Bool.random(using: &rng) ? Int.random(in: 10...95, using: &rng) : 0
            let path =
                "/insecure/rs:\(kind):\(w):\(h):\(enlarge ? 1 : 0)/g:\(gravity.0)/dpr:\(dpr)/rot:\(rotate)"
                + (q > 0 ? "/q:\(q)" : "") + "/plain/a.jpg"
            let settled = ImgproxyURL.settle(try Self.parse(path).request, source: source, limits: Self.limits)

            // Always imgproxy's sizes: the settled request plans what imgproxy's own rule
            // (restated below, held to imgproxy's tables) gives; never a planner error.
            let turned =
                rotate % 180 == 90 ? Size(width: source.size.height, height: source.size.width) : source.size
            let theirs = Self.imgproxySize(turned, kind, w, h, enlarge: enlarge, dpr: Double(dpr))
            do throws(AspectError) {
                let ours = try RenderOrder.plan(settled, source: source, limits: Self.limits, accept: nil).plan
                #expect(ours.output == theirs, "\(path) on \(source.size)")
            } catch {
                // Only a result over limits.maxDimension is refused (a 400 that says so).
                let over = max(theirs.width, theirs.height) > Self.limits.maxDimension
                if over, error.message.contains("limits.maxDimension") {
                    overLimit += 1
                } else {
                    planErrors.append("\(path) on \(source.size): \(error)")
                }
                continue
            }

            // The test's own model of when the native parameters mean the same.
            if kind == "auto" {
                let (s, d) = (turned.width - turned.height, w - h)
                kind = (s >= 0 && d >= 0) || (s < 0 && d < 0) ? "fill" : "fit"
            }
            let both = w > 0 && h > 0
            let covers = both && w <= turned.width && h <= turned.height
            let mode: String
            switch kind {
            case "fill" where both && (enlarge || covers), "fill-down" where both: mode = "fill"
            case "fill" where both: continue  // imgproxy keeps the source whole: its own plan
            case "force" where both: mode = "stretch"
            default: mode = "fit"
            }
            var query = "src=a.jpg&mode=\(mode)&upscale=\(enlarge ? 1 : 0)&dpr=\(dpr)&format=jpeg"
            if w > 0 { query += "&w=\(w)" }
            if h > 0 { query += "&h=\(h)" }
            if mode == "fill" { query += "&gravity=\(gravity.1)" }
            if rotate > 0 { query += "&rotate=\(rotate)" }
            if q > 0 { query += "&q=\(q)" }
            let native = try ThumbRequest.parse(query: query, limits: Self.limits)
            // A box the native API refuses (a side over limits.maxDimension) says nothing.
            guard let nativePlan = try? Geometry.plan(source: source.size, request: native, limits: Self.limits),
                nativePlan.output == theirs
            else { continue }
            #expect(settled.canonical == native.canonical, "\(path) on \(source.size): \(query)")
            shared += 1
        }
        // Most of them are said natively; the rest are imgproxy's own plans.
        #expect(shared > 1500, "\(shared) of 3000 shared a canonical form")
        #expect(planErrors.isEmpty, "\(planErrors.count) planned with an error: \(planErrors.prefix(5))")
        #expect(overLimit < 300, "\(overLimit) of 3000 over limits.maxDimension: the generator asks too much")
    }

    /// imgproxy's result size for `rs:KIND:W:H:ENLARGE` with `dpr` on a source of `src`
    /// (after its rotation), restated from its `prepare.go` (`calcScale`, `calcSizes`; no
    /// extend, crop or minimum sizes): the shrink of each side, made one for fit and fill,
    /// capped at 1 without enlarge (and dpr with it), scaled sides rounded half away from
    /// zero; fill cuts to the target, fill-down to the target's shape within the picture.
    static func imgproxySize(_ src: Size, _ kind: String, _ w: Int, _ h: Int, enlarge: Bool, dpr: Double) -> Size {
        func round(_ x: Double) -> Int { Int(x.rounded(.toNearestOrAwayFromZero)) }
        let (sw, sh) = (Double(src.width), Double(src.height))
        var wr = w == 0 ? 1 : sw / Double(w)
        var hr = h == 0 ? 1 : sh / Double(h)
        var kind = kind
        if kind == "auto" { kind = (sw >= sh) == (Double(w) >= Double(h)) ? "fill" : "fit" }
        if w == 0, kind != "force" {
            wr = hr
        } else if h == 0, kind != "force" {
            hr = wr
        } else if kind == "fit" {
            (wr, hr) = (max(wr, hr), max(wr, hr))
        } else if kind == "fill" || kind == "fill-down" {
            (wr, hr) = (min(wr, hr), min(wr, hr))
        }
        var scale = dpr
        if !enlarge {
            let least = min(wr, hr)
            if least < 1 { (wr, hr, scale) = (wr / least, hr / least, scale / least) }
            scale = min(scale, min(wr, hr))
        }
        (wr, hr) = (min(wr / scale, sw), min(hr / scale, sh))
        let scaled = Size(width: round(sw / wr), height: round(sh / hr))
        let target = Size(width: w == 0 ? 0 : round(Double(w) * scale), height: h == 0 ? 0 : round(Double(h) * scale))
        var cut = target
        if kind == "fill-down", !enlarge, target.width > 0, target.height > 0 {
            let (dw, dh) = (Double(target.width) / Double(scaled.width), Double(target.height) / Double(scaled.height))
            if dw > dh, dw > 1 {
                cut = Size(
                    width: scaled.width,
                    height: round(Double(scaled.width) * Double(target.height) / Double(target.width)))
            } else if dh > dw, dh > 1 {
                cut = Size(
                    width: round(Double(scaled.height) * Double(target.width) / Double(target.height)),
                    height: scaled.height)
            }
        }
        guard kind == "fill" || kind == "fill-down" else { return scaled }
        return Size(
            width: cut.width == 0 ? scaled.width : min(scaled.width, cut.width),
            height: cut.height == 0 ? scaled.height : min(scaled.height, cut.height))
    }

    /// The restated rule gives imgproxy's own answers: every row of its tables that only
    /// resizes (with or without enlarge) on its 200×100 picture.
    @Test func theRestatedRuleIsImgproxys() {
        var checked = 0
        for c in imgproxyResizeCases {
            let parts = c.options.split(separator: "/")
            guard parts.count <= 2, parts.dropFirst().allSatisfy({ $0 == "el:1" }) else { continue }
            let rs = parts[0].split(separator: ":", omittingEmptySubsequences: false)
            guard rs.count == 4, rs[0] == "rs", let w = Int(rs[2]), let h = Int(rs[3]) else { continue }
            let size = Self.imgproxySize(
                Size(width: 200, height: 100), String(rs[1]), w, h, enlarge: parts.count == 2, dpr: 1)
            #expect(size == Size(width: c.width, height: c.height), "\(c.table) \(c.options)")
            checked += 1
        }
        #expect(checked >= 40, "\(checked) rows")
    }
}
