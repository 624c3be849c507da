import Core
import Testing

/// What comes after the geometry (SPEC: "After it"): `extend` out to the box as asked,
/// `pixelate`, and `padding` around everything, by the sizes the plan gives.
@Suite struct AfterGeometryTests {
    static func plan(_ query: String, source: Size = Size(width: 800, height: 600)) throws -> Plan {
        try Geometry.plan(
            source: source, request: ThumbRequest.parse(query: "src=a.jpg&" + query, limits: defaultLimits),
            limits: defaultLimits)
    }

    @Test(
        arguments: [
            // No-upscaling shrank the box: the result is placed on the box as asked.
            ("w=1600&h=1200&extend=1", Size(width: 1600, height: 1200), Rect(x: 400, y: 300, width: 800, height: 600)),
            (
                "w=1600&h=1200&extend=1&gravity=northwest&mode=pad", Size(width: 1600, height: 1200),
                Rect(x: 0, y: 0, width: 800, height: 600)
            ),
            // fit left a side short: the box as asked.
            ("w=400&h=400&extend=1", Size(width: 400, height: 400), Rect(x: 0, y: 50, width: 400, height: 300)),
            ("w=400&h=400&extend=1&gravity=south&mode=pad", Size(width: 400, height: 400), nil),
            // dpr counts: the box as asked is in device pixels.
            (
                "w=500&h=500&dpr=2&extend=1", Size(width: 1000, height: 1000),
                Rect(x: 100, y: 200, width: 800, height: 600)
            ),
        ] as [(String, Size, Rect?)])
    func extendPlacesTheResultOnTheBoxAsAsked(query: String, output: Size, placed: Rect?) throws {
        let p = try Self.plan(query)
        #expect(p.output == output && p.canvas == output, "\(query): \(p.output)")
        #expect(p.extended == placed, "\(query): \(String(describing: p.extended))")
        // Transparent bars: an extended canvas, or pad's own bars.
        #expect(p.hasAlpha(sourceHasAlpha: false) == (placed != nil || query.contains("mode=pad")))
    }

    @Test func withoutExtendNothingIsAdded() throws {
        let p = try Self.plan("w=1600&h=1200")
        #expect(p.output == Size(width: 800, height: 600) && p.extended == nil)
        #expect(try Self.plan("w=400&h=400&extend=1&bg=ffffff").hasAlpha(sourceHasAlpha: false) == false)
    }

    @Test func paddingGrowsTheOutputTimesDprAroundTheShape() throws {
        let p = try Self.plan("w=200&h=200&mode=fill&shape=circle&padding=10,20,30,40&dpr=2")
        #expect(p.canvas == Size(width: 400, height: 400) && p.cornerRadius == 200)
        #expect(p.padding == Insets(top: 20, right: 40, bottom: 60, left: 80))
        #expect(p.output == Size(width: 520, height: 480))
        #expect(try Self.plan("w=100&padding=5").output == Size(width: 110, height: 85))
        // No margin is no padding.
        #expect(try Self.plan("w=100&padding=0").padding == nil)
    }

    @Test func paddingPastMaxDimensionIs400() {
        #expect(throws: AspectError.self) { try Self.plan("w=4096&h=100&mode=fill&upscale=1&padding=1") }
    }

    @Test(arguments: [
        ("padding=1,2", "padding must be N or T,R,B,L"), ("padding=-1", "padding must be"),
        ("padding=a", "padding must"),
        ("pixelate=1", "pixelate must be an integer from 2 to 256"), ("pixelate=257", "pixelate must be"),
        ("pixelate=4&blur=2", "pixelate is given with blur"), ("extend=2", "extend must be 0, 1, false or true"),
        ("maxbytes=1000", "maxbytes must be an integer from 1024"),
        ("trim=101", "trim must be a decimal from 0 to 100"),
        ("wm=logo", "wm 'logo' is not a configured watermark; none are configured"),
    ])
    func badValuesAre400sNamingTheParameter(query: String, words: String) {
        do {
            _ = try ThumbRequest.parse(query: "src=a.jpg&w=100&" + query, limits: defaultLimits)
            Issue.record("\(query) was accepted")
        } catch {
            #expect(error.code == .badParam && error.message.contains(words), "\(query): \(error.message)")
        }
    }

    @Test func theCanonicalFormHoldsThem() throws {
        func canonical(_ q: String) throws -> String {
            try ThumbRequest.parse(query: "src=a.jpg&w=100&" + q, limits: defaultLimits).canonical
        }
        #expect(try canonical("padding=4") == canonical("padding=4,4,4,4"))
        #expect(try canonical("padding=0") == canonical(""))
        #expect(try canonical("extend=0") == canonical("extend=false"))
        #expect(try canonical("extend=true") != canonical(""))
        #expect(try canonical("pixelate=8").contains("pixelate=8"))
        #expect(try canonical("maxbytes=20000").contains("maxbytes=20000"))
        #expect(try canonical("trim=5.0") == canonical("trim=5") && canonical("trim=0") != canonical(""))
        #expect(try canonical("padding=1,2,3,4").contains("padding=1%2C2%2C3%2C4"))
    }

    /// `wm`: a configured name (else a 400 listing them), in the canonical form, placed by
    /// the plan on the canvas before `padding`.
    @Test func aWatermarkIsNamedAndPlaced() throws {
        var limits = defaultLimits
        limits.watermarks = [
            "logo": Watermark(src: "logo.png", margin: 5, size: Size(width: 200, height: 100)),
            "seal": Watermark(src: "seal.png", position: .north, scale: 0.5, size: Size(width: 50, height: 50)),
        ]
        let r = try ThumbRequest.parse(query: "src=a.jpg&w=300&h=200&wm=logo&padding=10&dpr=2", limits: limits)
        #expect(r.canonical.contains("wm=logo"))
        let plan = try Geometry.plan(source: Size(width: 3000, height: 2000), request: r, limits: limits)
        // 600×400 canvas: 0.2 of its width is 120×60, 10 device pixels from the bottom right.
        #expect(
            plan.watermark
                == WatermarkPlacement(name: "logo", rect: Rect(x: 470, y: 330, width: 120, height: 60), opacity: 1))
        #expect(plan.output == Size(width: 640, height: 440))
        let seal = try ThumbRequest.parse(query: "src=a.jpg&w=300&h=200&wm=seal", limits: limits)
        let sealed = try Geometry.plan(source: Size(width: 3000, height: 2000), request: seal, limits: limits)
        #expect(sealed.watermark?.rect == Rect(x: 75, y: 0, width: 150, height: 150))
        #expect(
            throws: AspectError(
                .badParam, "wm 'badge' is not a configured watermark; the configured ones are logo, seal")
        ) {
            try ThumbRequest.parse(query: "src=a.jpg&wm=badge", limits: limits)
        }
    }
}
