import Foundation
import Testing

@testable import Core
@testable import Imgproxy

/// imgproxy's URL format (SPEC: imgproxy URLs), held to imgproxy's own test cases: its
/// result sizes (`processing/processing_test.go`, in ImgproxySizeCases.swift) and its
/// parser's cases (`options/parser/processing_options_test.go`), each cited by the name
/// of the test it came from.
@Suite struct ImgproxyTests {
    static let settings = ImgproxyURL.Settings(root: .http(base: "http://images.dev/"))
    static let limits = RequestLimits(maxDimension: 4096, maxDpr: 8)
    static let geometryPNG = SourceDescription(
        size: Size(width: 200, height: 100), hasAlpha: false, format: "png", bytes: 1000)

    static func parse(
        _ path: String, settings: ImgproxyURL.Settings = settings, now: Int64 = 1_700_000_000
    ) throws(AspectError) -> ImgproxyURL {
        try ImgproxyURL.parse(path: path, settings: settings, limits: limits, now: now)
    }

    /// The request as the service keys it on imgproxy's 200×100 `geometry.png`.
    static func settled(_ path: String) throws -> ThumbRequest {
        ImgproxyURL.settle(try parse(path).request, source: geometryPNG, limits: limits)
    }

    /// `native`: settled on the source, so the native geometry plans it where it says the
    /// same; else imgproxy's planner alone.
    static func output(_ options: String, native: Bool) throws -> Size {
        let path = "/sig/\(options)/plain/geometry.png"
        let request = native ? try settled(path) : try parse(path).request
        let order = try RenderOrder.plan(request, source: geometryPNG, limits: limits, accept: nil)
        return order.plan.output
    }

    /// Every size imgproxy's tables expect, as the dialect plans it (through the native
    /// geometry where the native parameters can say it), and by imgproxy's planner alone.
    @Test(arguments: imgproxyResizeCases.indices)
    func imgproxysResultSizes(index: Int) throws {
        let c = imgproxyResizeCases[index]
        let expected = Size(width: c.width, height: c.height)
        #expect(try Self.output(c.options, native: true) == expected, "\(c.table) \(c.options)")
        #expect(try Self.output(c.options, native: false) == expected, "\(c.table) \(c.options), imgproxy's planner")
    }

    @Test(arguments: (imgproxyCropCases + imgproxyExtendAndPaddingCases).indices)
    func imgproxysCropExtendAndPaddingSizes(index: Int) throws {
        let c = (imgproxyCropCases + imgproxyExtendAndPaddingCases)[index]
        #expect(
            try Self.output(c.options, native: true) == Size(width: c.width, height: c.height),
            "\(c.table) \(c.options)")
    }

    /// The native parameters take over only where they mean the same; the rest keeps
    /// imgproxy's geometry, in a canonical form of its own.
    @Test func theNativeFormIsUsedOnlyWhereItMeansTheSame() throws {
        let fill = try Self.settled("/sig/rs:fill:300:200:1/g:soea/plain/a.jpg@webp")
        var native = try ThumbRequest.parse(
            query: "src=a.jpg&w=300&h=200&mode=fill&gravity=southeast&upscale=1&format=webp", limits: Self.limits)
        native.signature = nil
        #expect(fill.canonical == native.canonical)
        let down = try Self.settled("/sig/rs:fill-down:300:200/plain/a.jpg")
        #expect(down.imgproxy == nil && down.mode == .fill && !down.upscale)
        // imgproxy's fill without enlarge does not keep the ratio on a small source: its own plan.
        let fillSmall = try Self.settled("/sig/rs:fill:300:200/plain/a.jpg")
        #expect(fillSmall.imgproxy != nil && fillSmall.canonical.contains("imgproxy="))
        for options in ["mw:300", "z:2", "ex:1", "rs:fill:100:100/g:ce:10:0", "rs:fit:300:300/c:50:50/rot:90"] {
            #expect(try Self.settled("/sig/\(options)/plain/a.jpg").imgproxy != nil, "\(options)")
        }
        // What the native API says on this source, it says: one entry.
        for options in ["rs:force:10:10", "rs:auto:10:20", "c:50:50", "pd:10", "rs:fit:50:50/g:ce:10:0"] {
            #expect(try Self.settled("/sig/\(options)/plain/a.jpg").imgproxy == nil, "\(options)")
        }
    }

    // options/parser/processing_options_test.go

    @Test func parseBase64URL() throws {
        // TestParseBase64URL, TestParseBase64URLWithBase: a base64url source with .png.
        let b64 = Data("lorem/ipsum.jpg".utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
        let url = try Self.parse("/sig/size:100:100/\(b64).png")
        #expect(url.request.src == "lorem/ipsum.jpg" && url.request.format == .png)
        // TestParseBase64URLWithoutExtension: the source's format is kept.
        #expect(try Self.parse("/sig/size:100:100/\(b64)").request.format == .source)
        // A full URL under the root is that path.
        let full = Data("http://images.dev/lorem/ipsum.jpg".utf8).base64EncodedString()
        #expect(try Self.parse("/sig/\(full)").request.src == "lorem/ipsum.jpg")
        // The docs' signing example: the base64 split into segments.
        let split = try Self.parse(
            "/sig/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png",
            settings: ImgproxyURL.Settings(root: .http(base: "http://example.com/")))
        #expect(split.request.src == "images/curiosity.jpg" && split.request.format == .png)
    }

    @Test func parsePlainURL() throws {
        // TestParsePlainURL, TestParsePlainURLWithBase
        let url = try Self.parse("/sig/size:100:100/plain/http://images.dev/lorem/ipsum.jpg@png")
        #expect(url.request.src == "lorem/ipsum.jpg" && url.request.format == .png)
        #expect(try Self.parse("/sig/size:100:100/plain/lorem/ipsum.jpg@png").request.src == "lorem/ipsum.jpg")
        // TestParsePlainURLWithoutExtension: the source's format is kept.
        #expect(try Self.parse("/sig/size:100:100/plain/lorem/ipsum.jpg").request.format == .source)
        // TestParsePlainURLEscaped
        #expect(try Self.parse("/sig/plain/lorem/ipsum%20x.jpg@png").request.src == "lorem/ipsum x.jpg")
    }

    @Test func parsePathOptions() throws {
        // TestParsePathFormat
        #expect(try Self.parse("/sig/format:webp/plain/a.jpg").request.format == .webp)
        // TestParsePathResize
        let resize = try Self.parse("/sig/resize:fill:100:200:1/plain/a.jpg").request.imgproxy
        #expect(resize?.resize == .fill && resize?.width == 100 && resize?.height == 200 && resize?.enlarge == true)
        // TestParsePathResizingType, TestParsePathSize, TestParsePathWidth, TestParsePathHeight, TestParsePathEnlarge
        #expect(try Self.parse("/sig/resizing_type:fill/plain/a.jpg").request.imgproxy?.resize == .fill)
        let size = try Self.parse("/sig/size:100:200:1/plain/a.jpg").request.imgproxy
        #expect(size?.width == 100 && size?.height == 200 && size?.enlarge == true)
        #expect(try Self.parse("/sig/width:100/plain/a.jpg").request.imgproxy?.width == 100)
        #expect(try Self.parse("/sig/height:100/plain/a.jpg").request.imgproxy?.height == 100)
        #expect(try Self.parse("/sig/enlarge:1/plain/a.jpg").request.imgproxy?.enlarge == true)
        // TestParsePathExtend
        let extend = try Self.parse("/sig/extend:1:so:10:20/plain/a.jpg").request.imgproxy
        #expect(extend?.extend == true && extend?.extendGravity == ImgproxyGravity(.so, x: 10, y: 20))
        // TestParsePathExtendSmartGravity, TestParsePathExtendReplicateGravity
        #expect(throws: AspectError.self) { try Self.parse("/sig/extend:1:sm/plain/a.jpg") }
        #expect(throws: AspectError.self) { try Self.parse("/sig/extend:1:re/plain/a.jpg") }
        // TestParsePathGravity, TestParsePathGravityFocusPoint, TestParsePathGravityReplicate
        #expect(try Self.parse("/sig/gravity:soea/plain/a.jpg").request.imgproxy?.gravity.kind == .soea)
        let fp = try Self.parse("/sig/gravity:fp:0.5:0.75/plain/a.jpg").request.imgproxy?.gravity
        #expect(fp == ImgproxyGravity(.fp, x: 0.5, y: 0.75))
        #expect(throws: AspectError.self) { try Self.parse("/sig/gravity:re/plain/a.jpg") }
        // TestParsePathCrop, TestParsePathCropGravity, TestParsePathCropGravityReplicate
        let crop = try Self.parse("/sig/crop:100:200/plain/a.jpg").request.imgproxy
        #expect(crop?.cropWidth == 100 && crop?.cropHeight == 200 && crop?.cropGravity == nil)
        let cropG = try Self.parse("/sig/crop:100:200:nowe:10:20/plain/a.jpg").request.imgproxy
        #expect(cropG?.cropGravity == ImgproxyGravity(.nowe, x: 10, y: 20))
        #expect(throws: AspectError.self) { try Self.parse("/sig/crop:100:200:re/plain/a.jpg") }
        // TestParsePathQuality
        #expect(try Self.parse("/sig/quality:55/plain/a.jpg").request.quality == 55)
        // TestParsePathBackground, TestParsePathBackgroundHex, TestParsePathBackgroundDisable
        #expect(
            try Self.parse("/sig/background:128:129:130/plain/a.jpg").request.background
                == Color(red: 128, green: 129, blue: 130, alpha: 255))
        #expect(
            try Self.parse("/sig/background:ffddee/plain/a.jpg").request.background
                == Color(red: 0xff, green: 0xdd, blue: 0xee, alpha: 255))
        #expect(try Self.parse("/sig/background:fff/background:/plain/a.jpg").request.background == nil)
        // TestParsePathBlur, TestParsePathSharpen, TestParsePathDpr
        #expect(try Self.parse("/sig/blur:0.2/plain/a.jpg").request.blur == 0.2)
        #expect(try Self.parse("/sig/sharpen:0.2/plain/a.jpg").request.sharpen == 0.2)
        #expect(try Self.parse("/sig/dpr:2/plain/a.jpg").request.dpr == 2)
        // TestParsePathCachebuster: accepted (the key follows the source's version anyway).
        #expect(try Self.parse("/sig/cachebuster:123/plain/a.jpg").request.src == "a.jpg")
    }

    /// TestParsePathWatermark: opacity, position, offsets, scale, on the first configured one.
    @Test func parsePathWatermark() throws {
        var settings = Self.settings
        settings.watermark = "logo"
        let wm = try Self.parse("/sig/watermark:0.5:soea:10:20:0.6/plain/a.jpg", settings: settings).request
        #expect(
            wm.imgproxy?.watermark
                == ImgproxyWatermark(
                    name: "logo", opacity: 0.5, position: ImgproxyGravity(.soea, x: 10, y: 20), scale: 0.6))
        #expect(throws: AspectError.self) { try Self.parse("/sig/wm:0.5/plain/a.jpg") }
    }

    /// TestParsePathPreset, TestParsePathPresetDefault, TestParsePathPresetLoopDetection.
    @Test func parsePathPresets() throws {
        var settings = Self.settings
        settings.presets = ["test1": "resizing_type:fill", "test2": "blur:0.2/quality:50"]
        let both = try Self.parse("/sig/preset:test1:test2/plain/a.jpg", settings: settings)
        #expect(both.request.imgproxy?.resize == .fill && both.request.blur == 0.2 && both.request.quality == 50)
        #expect(both.usedPresets == ["test1", "test2"])
        settings.presets = ["default": "resizing_type:fill/blur:0.2/quality:50"]
        let byDefault = try Self.parse("/sig/quality:70/plain/a.jpg", settings: settings)
        #expect(byDefault.request.imgproxy?.resize == .fill && byDefault.request.blur == 0.2)
        #expect(byDefault.request.quality == 70 && byDefault.usedPresets == ["default"])
        settings.presets = ["test1": "resizing_type:fill/preset:test2", "test2": "blur:0.2/preset:test1"]
        let loop = try Self.parse("/sig/preset:test1/plain/a.jpg", settings: settings)
        #expect(loop.usedPresets == ["test1", "test2"])
    }

    /// TestParseExpires, TestParseExpiresExpired: a past time is a 410.
    @Test func parseExpires() throws {
        #expect(try Self.parse("/sig/exp:1800000000/plain/a.jpg").expires == 1_800_000_000)
        #expect(throws: AspectError(.gone, "the URL expired at 1600000000 (expires)")) {
            try Self.parse("/sig/exp:1600000000/plain/a.jpg")
        }
    }

    /// Aspect's own rules on top: an option imgproxy has that the dialect does not is a 400
    /// naming it; a source outside the root is a 403; the path rules of `src` hold.
    @Test func refusals() throws {
        for option in ["mrd:100", "ph:1", "obj:face", "ad:1", "bgalpha:0.5"] {
            do {
                _ = try Self.parse("/sig/\(option)/plain/a.jpg")
                Issue.record("\(option) was accepted")
            } catch {
                #expect(error.code == .badParam && error.message.contains("not supported"), "\(option): \(error)")
            }
        }
        #expect(throws: AspectError.self) { try Self.parse("/sig/sm:0/plain/a.jpg") }
        #expect(throws: AspectError.self) { try Self.parse("/sig/el:maybe/plain/a.jpg") }
        for outside in [
            "http://elsewhere.dev/a.jpg", "s3://bucket/a.jpg", "local:///a.jpg", "https://images.dev/a.jpg",
        ] {
            do {
                _ = try Self.parse("/sig/plain/\(outside)")
                Issue.record("\(outside) was accepted")
            } catch {
                #expect(error.code == .forbiddenPath, "\(outside)")
            }
        }
        #expect(throws: AspectError.self) { try Self.parse("/sig/plain/../etc/passwd") }
        #expect(throws: AspectError.self) { try Self.parse("/sig/plain/.hidden.jpg") }
        // A folder root takes local:/// as the root itself.
        #expect(
            try Self.parse("/sig/plain/local:///photos/a.jpg", settings: ImgproxyURL.Settings(root: .folder("/srv")))
                .request.src == "photos/a.jpg")
    }

    /// Positions by imgproxy's `calcPosition`: a compass edge, offsets in pixels (× dpr) or
    /// as a fraction, clamped inside.
    @Test func positions() {
        let outer = Size(width: 200, height: 100)
        let inner = Size(width: 50, height: 50)
        // (200 − 50 + 1) / 2 = 75.5, rounded half to even as Go's RoundToEven: 76.
        #expect(IMath.position(outer, inner, ImgproxyGravity(.ce), dpr: 1) == (76, 26))
        #expect(IMath.position(outer, inner, ImgproxyGravity(.soea, x: 10, y: 5), dpr: 2) == (130, 40))
        #expect(IMath.position(outer, inner, ImgproxyGravity(.nowe, x: 0.1, y: 0.2), dpr: 1) == (20, 20))
        #expect(IMath.position(outer, inner, ImgproxyGravity(.fp, x: 1, y: 1), dpr: 1) == (150, 50))
        #expect(IMath.position(outer, inner, ImgproxyGravity(.we, x: 500), dpr: 1) == (150, 26))
    }

    /// `crop` is of the image as rotated and flipped, as imgproxy reads it; Aspect cuts the
    /// same pixels from the upright source before turning it.
    @Test func aCropAfterARotationIsTheSamePixels() throws {
        var g = ImgproxyGeometry()
        (g.cropWidth, g.cropHeight, g.cropGravity) = (40, 30, ImgproxyGravity(.nowe))
        for (rotate, expected) in [
            (0, Rect(x: 0, y: 0, width: 40, height: 30)), (90, Rect(x: 0, y: 60, width: 30, height: 40)),
            (180, Rect(x: 160, y: 70, width: 40, height: 30)), (270, Rect(x: 170, y: 0, width: 30, height: 40)),
        ] {
            g.rotate = rotate
            let r = ThumbRequest(src: "a.jpg")
            let plan = try g.plan(
                source: Size(width: 200, height: 100), request: r, isVector: false, limits: Self.limits)
            #expect(plan.region == expected, "rotate \(rotate)")
            #expect(plan.output == Size(width: 40, height: 30), "rotate \(rotate)")
        }
    }
}

/// `q=auto`'s search (SPEC: Efficiency): whatever the SSIM curve, at most six encodes (the
/// chosen quality's own included when it was not measured), Max never measured, and a
/// choice within 2 of the lowest quality that keeps the picture; Max when none below does.
@Suite struct AutoQualitySearchTests {
    /// Runs the search on `ssim(q)`; the choice, the qualities measured, and the encodes.
    static func run(_ ssim: (Int) -> Double, along axis: AutoQuality.Axis = .quality) -> (
        q: Int, tries: [Int], encodes: Int
    ) {
        var tries: [Int] = []
        let q = AutoQuality().search(along: axis) { (q: Int) -> Double in
            tries.append(q)
            return ssim(q)
        }
        return (q, tries, tries.count + (tries.contains(q) ? 0 : 1))
    }

    static func check(_ ssim: (Int) -> Double, _ label: String, along axis: AutoQuality.Axis = .quality) -> Int {
        let (q, tries, encodes) = run(ssim, along: axis)
        let lowest = (30...90).first { ssim($0) >= 0.985 } ?? 90
        #expect(encodes <= 6 && !tries.contains(90), "\(label): \(tries)")
        #expect(q >= lowest && q - lowest <= 2, "\(label): chose \(q), lowest \(lowest), after \(tries)")
        if q < 90 { #expect(ssim(q) >= 0.985, "\(label)") }
        return encodes
    }

    /// A step at every threshold: a curve no line predicts, where the search falls back
    /// on bisection's promise.
    @Test(arguments: Array(30...91), [AutoQuality.Axis.quality, .webpCompression])
    func aStepAtAnyThreshold(threshold: Int, axis: AutoQuality.Axis) {
        _ = Self.check({ $0 >= threshold ? 0.99 : 0.98 }, "step at \(threshold)", along: axis)
    }

    /// Curves as photos give (`ln(1 − SSIM)` falling in a line, steeply or slowly, crossing
    /// the target anywhere, or nowhere in range): bounds kept, and fewer encodes than
    /// bisection's six on the average.
    @Test func curvesLikePhotosTakeFewerEncodes() {
        var encodes: [Int] = []
        for slope in stride(from: 0.005, through: 0.08, by: 0.005) {
            for crossing in stride(from: 20.0, through: 100.0, by: 1.7) {
                let curve = { (q: Int) -> Double in 1 - 0.015 * exp(-slope * (Double(q) - crossing)) }
                encodes.append(Self.check(curve, "slope \(slope), crossing \(crossing)"))
            }
        }
        let mean = Double(encodes.reduce(0, +)) / Double(encodes.count)
        #expect(mean < 3.7, "mean \(mean) encodes over \(encodes.count) curves")
    }

    /// WebP's curves, straight along libwebp's compression value (which moves three times
    /// as fast above quality 75 as below): the bounds kept, and fewer encodes followed
    /// along that axis than along the quality.
    @Test func curvesLikeWebPsTakeFewerEncodesAlongLibwebpsAxis() {
        let position = AutoQuality.Axis.webpCompression.position
        var (along, across) = (0, 0)
        var count = 0
        for slope in stride(from: 0.5, through: 4.0, by: 0.25) {
            for crossing in stride(from: 0.1, through: 0.9, by: 0.015) {
                let curve = { (q: Int) -> Double in 1 - 0.015 * exp(-slope * (position(q) - crossing)) }
                let label = "slope \(slope), crossing \(crossing)"
                along += Self.check(curve, label, along: .webpCompression)
                across += Self.check(curve, label, along: .quality)
                count += 1
            }
        }
        #expect(along < across, "\(along) encodes along libwebp's axis, \(across) along the quality, \(count) curves")
    }

    @Test func qAutoIsParsedAndCanonical() throws {
        let r = try ThumbRequest.parse(query: "src=a.jpg&w=100&q=auto", limits: RequestLimits())
        #expect(r.autoQuality && r.quality == nil && r.canonical.contains("q=auto"))
        #expect(throws: AspectError.self) {
            try ThumbRequest.parse(query: "src=a.jpg&q=automatic", limits: RequestLimits())
        }
        // output.quality=auto: a request without q searches; one with q, or with Save-Data, does not.
        var limits = RequestLimits()
        limits.autoQualityByDefault = true
        #expect(try ThumbRequest.parse(query: "src=a.jpg", limits: limits).searchesQuality(limits))
        #expect(try !ThumbRequest.parse(query: "src=a.jpg&q=70", limits: limits).searchesQuality(limits))
        var saving = try ThumbRequest.parse(query: "src=a.jpg", limits: limits)
        saving.saveData = true
        #expect(!saving.searchesQuality(limits))
    }
}
