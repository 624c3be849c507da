import Core
import Testing
import Thumbor

/// thumbor URLs read into Aspect's request and planned by thumbor 7.8's transformer (SPEC:
/// thumbor URLs; issue 40): the sizes worked out by hand from thumbor's `transformer.py`
/// and its filters, in its rounding (Python's `round`, half to even; `int()`, truncation).
@Suite struct ThumborPlanTests {
    static let limits = RequestLimits(maxDimension: 4096, maxDpr: 8)
    static let settings = ThumborURL.Settings(root: .folder("/images"))
    /// big.jpg's size, the test photographs' landscape.
    static let landscape = Size(width: 6028, height: 3391)

    static func url(_ path: String, settings: ThumborURL.Settings = settings) throws(AspectError) -> ThumborURL {
        try ThumborURL.parse(Substring(path), settings: settings, limits: limits)
    }

    static func plan(_ path: String, _ source: Size = landscape, trim: Rect? = nil, untrimmed: Size? = nil) throws
        -> Plan
    {
        let r = try url(path).request
        let g = try #require(r.thumbor)
        return try g.plan(
            source: ThumborSource(size: source, trim: trim, untrimmed: untrimmed), request: r, limits: limits)
    }

    /// `WxH`: the source cut to the target's shape around its centre, then resized to it.
    @Test func aSizeCutsAroundTheCentreThenResizes() throws {
        let p = try Self.plan("/unsafe/300x200/big.jpg")
        #expect(p.output == Size(width: 300, height: 200))
        // crop_width = int(round(ceil(300 × 3391 / 200))) = 5087; left = round(3014 − 2543.5) = 470 (half to even).
        #expect(p.region == Rect(x: 470, y: 0, width: 5087, height: 3391))
        #expect(p.resized == Size(width: 300, height: 200))
    }

    @Test func alignmentMovesTheCut() throws {
        #expect(try Self.plan("/unsafe/300x200/left/big.jpg").region?.x == 0)
        #expect(try Self.plan("/unsafe/300x200/right/big.jpg").region?.x == 6028 - 5087)
        let top = try Self.plan("/unsafe/300x300/center/top/big.jpg")
        #expect(top.region == Rect(x: 1318, y: 0, width: 3391, height: 3391))
    }

    /// A free side follows the ratio (round half to even); the shapes then agree and nothing is cut.
    @Test func aFreeSideFollowsTheRatio() throws {
        let p = try Self.plan("/unsafe/300x0/big.jpg")
        #expect(p.output == Size(width: 300, height: 169) && p.region == nil)
        let small = Size(width: 1200, height: 800)
        #expect(try Self.plan("/unsafe/x/a.jpg", small).output == small, "nothing asked: the source's size")
        #expect(try Self.plan("/unsafe/origx100/a.jpg", small).output == Size(width: 1200, height: 100))
    }

    /// A result over limits.maxDimension (4096 here) is made as thumbor makes it with
    /// MAX_WIDTH and MAX_HEIGHT at that limit: the source scaled to fit it first.
    @Test func aResultOverTheLimitIsMadeFromTheSourceScaledToIt() throws {
        // 6028 × 3391 normalised: 4096 × round(4096 × 3391 / 6028) = 4096 × 2304.
        #expect(try Self.plan("/unsafe/big.jpg").output == Size(width: 4096, height: 2304))
        #expect(try Self.plan("/unsafe/origx100/big.jpg").output == Size(width: 4096, height: 100))
        #expect(try Self.plan("/unsafe/5000x5000/big.jpg").output == Size(width: 4096, height: 4096))
        #expect(
            try Self.plan("/unsafe/0x0:4000x1000/big.jpg").output == Size(width: 4000, height: 1000),
            "within the limit: not scaled")
        // Over it, the crop is moved into the scaled source (floor division): 6028 → 4096, 1000 → 679.
        #expect(try Self.plan("/unsafe/0x0:6028x1000/big.jpg").output == Size(width: 4096, height: 679))
    }

    /// thumbor enlarges a smaller source to `WxH` (the native API does not without upscale).
    @Test func aSizeEnlarges() throws {
        #expect(
            try Self.plan("/unsafe/1200x900/a.png", Size(width: 520, height: 400)).output
                == Size(width: 1200, height: 900))
        let capped = try Self.plan("/unsafe/1200x900/filters:no_upscale()/a.png", Size(width: 520, height: 400))
        #expect(capped.output == Size(width: 520, height: 400))
    }

    /// The fit-in kinds: inside the box (never enlarging), covering it, turned to the source's way.
    @Test func fitInKinds() throws {
        #expect(try Self.plan("/unsafe/fit-in/300x200/big.jpg").output == Size(width: 300, height: 169))
        #expect(try Self.plan("/unsafe/full-fit-in/300x200/big.jpg").output == Size(width: 356, height: 200))
        #expect(try Self.plan("/unsafe/adaptive-fit-in/200x300/big.jpg").output == Size(width: 300, height: 169))
        #expect(try Self.plan("/unsafe/adaptive-full-fit-in/200x300/big.jpg").output == Size(width: 356, height: 200))
        let small = Size(width: 520, height: 400)
        #expect(try Self.plan("/unsafe/fit-in/1200x900/a.png", small).output == small)
        #expect(try Self.plan("/unsafe/full-fit-in/1200x900/a.png", small).output == Size(width: 1200, height: 923))
        #expect(
            try Self.plan("/unsafe/fit-in/1200x900/filters:upscale()/a.png", small).output
                == Size(width: 1170, height: 900), "upscale: int(520 × 900 / 400)")
    }

    /// Flips, and `rotate(N)` counter-clockwise, as the native clockwise turn and flip.
    @Test func flipsAndTurns() throws {
        let flipped = try Self.plan("/unsafe/-300x200/big.jpg")
        #expect(flipped.flip == .h && flipped.rotate == 0)
        #expect(try Self.plan("/unsafe/-300x-200/big.jpg").flip == .hv)
        let turned = try Self.plan("/unsafe/300x200/filters:rotate(90)/big.jpg")
        #expect(turned.output == Size(width: 200, height: 300) && turned.rotate == 270 && turned.flip == nil)
        let both = try Self.plan("/unsafe/-300x200/filters:rotate(90)/big.jpg")
        #expect(both.output == Size(width: 200, height: 300) && both.rotate == 90 && both.flip == .h)
        // A vertical flip then a quarter turn left: a quarter turn right of the horizontal mirror... of a half turn.
        let vertical = try Self.plan("/unsafe/300x-200/filters:rotate(90)/big.jpg")
        #expect(vertical.rotate == 270 && vertical.flip == .h)
    }

    /// `fill`: the picture centred on a canvas of the asked size.
    @Test func fillExtendsToTheBox() throws {
        let p = try Self.plan("/unsafe/fit-in/300x300/filters:fill(red)/big.jpg")
        #expect(p.output == Size(width: 300, height: 300))
        #expect(p.extended == Rect(x: 0, y: 65, width: 300, height: 169))
        #expect(p.canvasFill == .color(Color(red: 255, green: 0, blue: 0)))
        #expect(try Self.plan("/unsafe/fit-in/300x300/filters:fill(blur)/big.jpg").canvasFill == .blur)
        #expect(try Self.plan("/unsafe/fit-in/300x300/filters:fill(auto)/big.jpg").canvasFill == .mean)
    }

    /// Every CSS colour name PIL's `ImageColor` knows (thumbor's colours go through it), any
    /// case: values from CSS Color Module Level 4.
    @Test func everyCSSColourName() throws {
        #expect(NamedColors.all.count == 148)
        for (name, rgb) in [
            ("DarkSlateGray", (0x2F, 0x4F, 0x4F)), ("rebeccapurple", (0x66, 0x33, 0x99)),
            ("lightgoldenrodyellow", (0xFA, 0xFA, 0xD2)), ("mediumspringgreen", (0x00, 0xFA, 0x9A)),
            ("aliceblue", (0xF0, 0xF8, 0xFF)), ("yellowgreen", (0x9A, 0xCD, 0x32)),
        ] {
            let p = try Self.plan("/unsafe/fit-in/300x300/filters:fill(\(name))/big.jpg")
            #expect(
                p.canvasFill == .color(Color(red: UInt8(rgb.0), green: UInt8(rgb.1), blue: UInt8(rgb.2))), "\(name)")
        }
        #expect(throws: AspectError.self) {
            try Self.plan("/unsafe/fit-in/300x300/filters:fill(darkslategrey2)/big.jpg")
        }
    }

    @Test func proportionScalesTheResult() throws {
        #expect(
            try Self.plan("/unsafe/300x200/filters:proportion(0.5)/big.jpg").output == Size(width: 150, height: 100))
    }

    /// The manual crop, clamped to the source, and moved by what a trim cut.
    @Test func manualCrop() throws {
        let p = try Self.plan("/unsafe/10x10:400x300/big.jpg")
        #expect(p.region == Rect(x: 10, y: 10, width: 390, height: 290) && p.output == Size(width: 390, height: 290))
        let trimmed = try Self.plan(
            "/unsafe/trim/30x40:300x200/a.png", Size(width: 456, height: 326),
            trim: Rect(x: 40, y: 50, width: 456, height: 326), untrimmed: Size(width: 520, height: 400))
        #expect(trimmed.region == Rect(x: 0, y: 0, width: 260, height: 150), "30−40 and 40−50 clamp to 0")
        #expect(try Self.plan("/unsafe/500x500:100x100/big.jpg").region == nil, "an empty crop is none")
    }

    @Test func focalPointsMoveTheCut() throws {
        // The focal square's centre (200, 175) pulls the 300×300 cut to the left edge.
        #expect(try Self.plan("/unsafe/300x300/filters:focal(100x100:300x250)/big.jpg").region?.x == 0)
        let nested = try Self.url("/unsafe/300x300/filters:extract_focal()/host/unsafe/5000x0:6000x100/big.jpg")
        #expect(nested.request.src == "big.jpg")
        #expect(nested.request.thumbor?.focalPoints == [.init(x: 5500, y: 50, weight: 100_000)])
    }

    @Test func filtersIntoTheNativeFields() throws {
        let r = try Self.url(
            "/unsafe/300x200/filters:quality(55):format(webp):blur(4,2):max_bytes(9000):background_color(00ff00):grayscale():strip_icc():strip_exif()/photos/a%20b.jpg"
        ).request
        #expect(r.quality == 55 && r.format == .webp && r.blur == 2 && r.maxBytes == 9000 && r.grayscale)
        #expect(r.thumbor?.backgroundColor == Color(red: 0, green: 255, blue: 0))
        #expect(r.src == "photos/a b.jpg", "the image decoded once")
        let corners = try Self.url("/unsafe/300x200/filters:round_corner(20,255,255,255)/a.jpg").request.thumbor
        #expect(corners?.cornerRadius == 20 && corners?.cornerColor == .white)
        #expect(try Self.url("/unsafe/a.jpg").request.format == .source, "no format: the source's own")
    }

    /// Arguments thumbor 7.8 reads and answers as if the filter were not there: a turn
    /// that is not a multiple of 90, a blur of radius 0 (issue 50: they were 400s). The
    /// request is the one without them, so they share its cache entry.
    @Test(arguments: ["rotate(45)", "rotate(-135)", "blur(0)", "blur(0,3)"])
    func filtersThumborIgnoresChangeNothing(filter: String) throws {
        let plain = try Self.url("/unsafe/300x200/a.jpg").request
        let with = try Self.url("/unsafe/300x200/filters:\(filter)/a.jpg").request
        #expect(with.canonical == plain.canonical && with.blur == nil && with.thumbor == plain.thumbor)
    }

    /// `fill(C,1)`: the picture's transparent pixels take the colour too, the result laid
    /// over it; without the flag they stay transparent. Another cache entry either way.
    @Test func fillTransparentFlattensOntoTheColour() throws {
        let source = SourceDescription(size: Size(width: 200, height: 150), hasAlpha: true, format: "png", bytes: 1)
        func plan(_ filter: String) throws -> Plan {
            let r = try Self.url("/unsafe/200x0/filters:\(filter)/a.png").request
            return try RenderOrder.plan(
                ThumborURL.settle(r, source: source, limits: Self.limits), source: source, limits: Self.limits,
                accept: nil
            ).plan
        }
        let red = try #require(Color(hex: "ff0000"))
        let filled = try plan("fill(red,1)")
        #expect(filled.flattened && filled.background == red)
        #expect(try !plan("fill(red)").flattened && !plan("fill(red,0)").flattened)
        #expect(
            try Self.url("/unsafe/200x0/filters:fill(red,1)/a.png").request.canonical
                != Self.url("/unsafe/200x0/filters:fill(red)/a.png").request.canonical)
    }

    /// Any other filter, or a bad argument, is a 400 naming it.
    @Test(arguments: [
        ("sharpen(1,1,true)", "sharpen"), ("quality(101)", "quality"), ("format(heic)", "format"),
        ("format(bmp)", "format"), ("rotate(45.5)", "rotate"), ("blur(-1)", "blur"), ("proportion(2)", "proportion"),
        ("fill(nocolour)", "fill"), ("watermark(http://x/y.png,0,0,0)", "watermark"),
        ("round_corner(20|30,0,0,0)", "round_corner"), ("round_corner(20,0,0,0):fill(red)", "fill"),
        ("focal(abc)", "focal"),
    ])
    func otherFiltersAreRefused(filter: String, named: String) {
        #expect {
            _ = try Self.url("/unsafe/300x200/filters:\(filter)/a.jpg")
        } throws: { e in
            (e as? AspectError)?.code == .badParam && (e as? AspectError)?.message.contains(named) == true
        }
    }

    @Test func anImageOutsideTheRootIsRefused() {
        for path in [
            "/unsafe/300x200/%2e%2e/secret.jpg", "/unsafe/300x200/%2Fetc%2Fpasswd", "/unsafe/http://elsewhere/a.jpg",
        ] {
            if let e = (#expect(throws: AspectError.self) { _ = try Self.url(path) }) {
                #expect(e.code == .forbiddenPath, "\(path)")
            }
        }
    }

    /// Where the native API says the same on this source, the request becomes the native
    /// one (one cache entry, one ETag); where it cannot, thumbor's geometry stays.
    @Test func settlesToTheNativeRequestWhereItMeansTheSame() throws {
        let jpeg = SourceDescription(size: Self.landscape, hasAlpha: false, format: "jpeg", bytes: 1)
        let fill = ThumborURL.settle(try Self.url("/unsafe/300x200/big.jpg").request, source: jpeg, limits: Self.limits)
        #expect(fill.thumbor == nil && fill.width == 300 && fill.height == 200 && fill.mode == .fill && fill.upscale)
        #expect(fill.format == .jpeg)
        let fit = ThumborURL.settle(
            try Self.url("/unsafe/fit-in/300x200/big.jpg").request, source: jpeg, limits: Self.limits)
        #expect(fit.thumbor == nil && fit.mode == .fit && !fit.upscale)
        let full = ThumborURL.settle(
            try Self.url("/unsafe/full-fit-in/300x200/big.jpg").request, source: jpeg, limits: Self.limits)
        #expect(full.thumbor != nil, "covering the box: no native parameter says it")
        let left = ThumborURL.settle(
            try Self.url("/unsafe/300x200/left/big.jpg").request, source: jpeg, limits: Self.limits)
        #expect(left.thumbor == nil && left.gravity == .west)
        let png = SourceDescription(size: Self.landscape, hasAlpha: true, format: "png", bytes: 1)
        #expect(
            ThumborURL.settle(try Self.url("/unsafe/a.png").request, source: png, limits: Self.limits).format == .png)
        let heif = SourceDescription(size: Self.landscape, hasAlpha: false, format: "heif", bytes: 1)
        #expect(
            ThumborURL.settle(try Self.url("/unsafe/a.heic").request, source: heif, limits: Self.limits).format == .jpeg
        )
    }

    /// thumbor keeps a WebP or AVIF source's format when the URL names none, whether the
    /// URL is then said natively or planned by thumbor's rules: the rule is the dialect's,
    /// not the planner's (before the dialects had targets of their own, a URL said natively
    /// fell to imgproxy's rule and answered JPEG).
    @Test func theKeptFormatIsThumborsWhateverPlansIt() throws {
        for format in ["webp", "avif"] {
            let source = SourceDescription(size: Self.landscape, hasAlpha: false, format: format, bytes: 1)
            for path in ["/unsafe/300x200/a.\(format)", "/unsafe/full-fit-in/300x200/a.\(format)"] {
                let settled = ThumborURL.settle(try Self.url(path).request, source: source, limits: Self.limits)
                #expect(settled.format.rawValue == format, "\(path)")
            }
        }
    }
}
