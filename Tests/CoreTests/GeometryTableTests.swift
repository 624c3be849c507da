import Testing

@testable import Core

/// SPEC's box table, row by row, with sizes worked out by hand.
@Suite struct BoxTableTests {
    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        let source: Size
        let w: Int?, h: Int?, ratio: Double?
        let box: Size
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "w, h", source: size(4000, 3000), w: 300, h: 200, ratio: nil, box: size(300, 200)),
        Row(name: "w, ratio", source: size(4000, 3000), w: 300, h: nil, ratio: 4.0 / 3, box: size(300, 225)),
        Row(name: "w, ratio rounds half up", source: size(10, 10), w: 3, h: nil, ratio: 2, box: size(3, 2)),
        Row(name: "h, ratio", source: size(4000, 3000), w: nil, h: 300, ratio: 16.0 / 9, box: size(533, 300)),
        Row(
            name: "w alone: height follows the source", source: size(4000, 3000), w: 300, h: nil, ratio: nil,
            box: size(300, 225)),
        Row(name: "w alone on portrait", source: size(3000, 4000), w: 300, h: nil, ratio: nil, box: size(300, 400)),
        Row(name: "h alone", source: size(4000, 3000), w: nil, h: 300, ratio: nil, box: size(400, 300)),
        Row(
            name: "h alone, side below 1 becomes 1", source: size(1, 10000), w: nil, h: 100, ratio: nil,
            box: size(1, 100)),
        Row(
            name: "ratio alone, wider source", source: size(4000, 3000), w: nil, h: nil, ratio: 1, box: size(3000, 3000)
        ),
        Row(
            name: "ratio alone, narrower source", source: size(4000, 3000), w: nil, h: nil, ratio: 16.0 / 9,
            box: size(4000, 2250)),
        Row(
            name: "ratio alone equal to the source's", source: size(4000, 3000), w: nil, h: nil, ratio: 4.0 / 3,
            box: size(4000, 3000)),
        Row(name: "nothing", source: size(4000, 3000), w: nil, h: nil, ratio: nil, box: size(4000, 3000)),
        Row(name: "ratio 1:1000 with w", source: size(10, 10), w: 1, h: nil, ratio: 0.001, box: size(1, 1000)),
        Row(name: "ratio 1000:1 with h", source: size(10, 10), w: nil, h: 1, ratio: 1000, box: size(1000, 1)),
        Row(
            name: "ratio 1000:1 with w: height clamps to 1", source: size(10, 10), w: 300, h: nil, ratio: 1000,
            box: size(300, 1)),
    ]

    @Test(arguments: rows)
    func box(_ row: Row) throws {
        let css = try #require(
            Geometry.cssBox(source: row.source, width: row.w, height: row.h, ratio: row.ratio.flatMap(Ratio.init)))
        #expect(css.width == Double(row.box.width) && css.height == Double(row.box.height))
        // With upscale on and stretch, the output is the box itself.
        let r = request(w: row.w, h: row.h, ratio: row.ratio, mode: .stretch, upscale: true)
        let plan = try Geometry.plan(source: row.source, request: r, limits: RequestLimits(maxDimension: 10_000))
        #expect(plan.output == row.box)
    }

    @Test func allThreeIsAnError() {
        let result = planOrCode(size(100, 100), request(w: 10, h: 10, ratio: 1))
        #expect(throws: AspectError.self) { try result.get() }
        if case .failure(let e) = result {
            #expect(e.code == .badParam)
            #expect(e.message.contains("at most two"))
        }
    }

    @Test(arguments: [1.0, 2, 3])
    func dprMultipliesTheBox(dpr: Double) throws {
        let plan = try Geometry.plan(
            source: size(4000, 3000), request: request(w: 300, ratio: 4.0 / 3, mode: .fill, dpr: dpr),
            limits: defaultLimits)
        #expect(plan.output == size(Int(300 * dpr), Int(225 * dpr)))
    }

    /// A side that is exactly a half rounds up, though the scale is no exact Double:
    /// w=104 on 2400×1600 is the box 104×69, s = 69/1600, and the width 2400·69/1600 =
    /// 103.5 → 104 (it came out 103 when the width was worked out as 2400 × s).
    @Test(arguments: [
        (size(2400, 1600), 104, Mode.fit, size(104, 69)), (size(1600, 2400), 104, Mode.fit, size(104, 156)),
        (size(2400, 1600), 104, Mode.pad, size(104, 69)), (size(2400, 1600), 104, Mode.fill, size(104, 69)),
    ])
    func aHalfIsAHalf(source: Size, w: Int, mode: Mode, output: Size) throws {
        let plan = try Geometry.plan(source: source, request: request(w: w, mode: mode), limits: defaultLimits)
        #expect(plan.output == output)
        #expect(plan.resized.width >= output.width && plan.resized.height >= output.height || mode != .fill)
        if mode != .fill { #expect(plan.resized == output) }
    }

    @Test func dprRoundsEachSide() throws {
        let plan = try Geometry.plan(
            source: size(4000, 3000), request: request(w: 101, h: 33, mode: .stretch, dpr: 1.5), limits: defaultLimits)
        #expect(plan.output == size(152, 50))  // 151.5 → 152, 49.5 → 50
    }

    @Test func overMaxDimensionIsAnErrorNotAClamp() {
        // 2100 × 2 = 4200 > 4096
        let r = planOrCode(size(8000, 6000), request(w: 2100, h: 100, mode: .fill, dpr: 2))
        guard case .failure(let e) = r else {
            Issue.record("expected an error, got \(r)")
            return
        }
        #expect(e.code == .badParam)
        #expect(e.message.contains("4200×200") && e.message.contains("limits.maxDimension 4096"))
        // The height following a very tall source overflows the limit too.
        #expect(throws: AspectError.self) { try planOrCode(size(1, 10000), request(w: 1)).get() }
        // Exactly at the limit is fine.
        #expect((try? planOrCode(size(8000, 6000), request(w: 2048, h: 100, mode: .fill, dpr: 2)).get()) != nil)
    }
}

/// The worked examples of docs/api.md, each mode with and without upscaling.
@Suite struct ModeExampleTests {
    @Test func fitFillPadStretchOnALandscape() throws {
        let src = size(4000, 3000)
        let fit = try Geometry.plan(source: src, request: request(w: 300, h: 300, mode: .fit), limits: defaultLimits)
        #expect(fit.output == size(300, 225))
        #expect(fit.scale == 0.075)

        let fill = try Geometry.plan(source: src, request: request(w: 300, h: 300, mode: .fill), limits: defaultLimits)
        #expect(fill.output == size(300, 300))
        #expect(fill.resized == size(400, 300))
        #expect(fill.crop == Rect(x: 50, y: 0, width: 300, height: 300))

        let pad = try Geometry.plan(source: src, request: request(w: 300, h: 300, mode: .pad), limits: defaultLimits)
        #expect(pad.output == size(300, 300))
        #expect(pad.placement == Rect(x: 0, y: 38, width: 300, height: 225))  // 37.5 rounds away from zero

        let stretch = try Geometry.plan(
            source: src, request: request(w: 300, h: 300, mode: .stretch), limits: defaultLimits)
        #expect(stretch.output == size(300, 300))
        #expect(stretch.scaleX == 0.075 && stretch.scaleY == 0.1)

        let readme = try Geometry.plan(
            source: src, request: request(w: 300, ratio: 4.0 / 3, mode: .fill), limits: defaultLimits)
        #expect(readme.output == size(300, 225))
    }

    @Test func noUpscaleDividesTheBox() throws {
        let src = size(200, 100)
        let fill = try Geometry.plan(source: src, request: request(w: 400, h: 400, mode: .fill), limits: defaultLimits)
        #expect(fill.output == size(100, 100))
        #expect(fill.resized == size(200, 100))
        #expect(fill.crop == Rect(x: 50, y: 0, width: 100, height: 100))
        #expect(fill.scale == 1)

        let fit = try Geometry.plan(source: src, request: request(w: 400, h: 400, mode: .fit), limits: defaultLimits)
        #expect(fit.output == size(200, 100))

        let pad = try Geometry.plan(source: src, request: request(w: 400, h: 400, mode: .pad), limits: defaultLimits)
        #expect(pad.output == size(200, 200))
        #expect(pad.placement == Rect(x: 0, y: 50, width: 200, height: 100))

        let stretch = try Geometry.plan(
            source: src, request: request(w: 400, h: 400, mode: .stretch), limits: defaultLimits)
        #expect(stretch.output == size(100, 100))
        #expect(stretch.scaleX == 0.5 && stretch.scaleY == 1)
    }

    @Test func upscaleOnGivesTheBox() throws {
        let src = size(200, 100)
        for (mode, out) in [
            (Mode.fit, size(400, 200)), (.fill, size(400, 400)), (.pad, size(400, 400)), (.stretch, size(400, 400)),
        ] {
            let plan = try Geometry.plan(
                source: src, request: request(w: 400, h: 400, mode: mode, upscale: true), limits: defaultLimits)
            #expect(plan.output == out, "\(mode)")
        }
    }

    @Test(arguments: [
        (Gravity.center, Rect(x: 50, y: 0, width: 300, height: 300)),
        (.west, Rect(x: 0, y: 0, width: 300, height: 300)),
        (.east, Rect(x: 100, y: 0, width: 300, height: 300)),
        (.northwest, Rect(x: 0, y: 0, width: 300, height: 300)),
        (.southeast, Rect(x: 100, y: 0, width: 300, height: 300)),
        (.north, Rect(x: 50, y: 0, width: 300, height: 300)),
    ])
    func fillGravityPicksTheWindow(gravity: Gravity, window: Rect) throws {
        let plan = try Geometry.plan(
            source: size(4000, 3000), request: request(w: 300, h: 300, mode: .fill, gravity: gravity),
            limits: defaultLimits)
        #expect(plan.crop == window)
    }

    @Test(arguments: [
        (0.0, 0.0, 0), (1.0, 0.0, 100), (0.5, 0.5, 50), (0.3, 0.5, 0), (0.7, 0.5, 100), (0.6, 0.5, 90),
    ])
    func focusCentresTheWindowAsFarAsEdgesAllow(fx: Double, fy: Double, x: Int) throws {
        var r = request(w: 300, h: 300, mode: .fill, gravity: .focus)
        r.focusX = fx
        r.focusY = fy
        let plan = try Geometry.plan(source: size(4000, 3000), request: r, limits: defaultLimits)
        #expect(plan.crop == Rect(x: x, y: 0, width: 300, height: 300))  // 0.6 × 400 − 150 = 90
    }

    @Test(arguments: [
        (Gravity.north, Rect(x: 0, y: 0, width: 300, height: 225)),
        (.south, Rect(x: 0, y: 75, width: 300, height: 225)),
        (.center, Rect(x: 0, y: 38, width: 300, height: 225)),
    ])
    func padGravityPlaces(gravity: Gravity, at: Rect) throws {
        let plan = try Geometry.plan(
            source: size(4000, 3000), request: request(w: 300, h: 300, mode: .pad, gravity: gravity),
            limits: defaultLimits)
        #expect(plan.placement == at)
    }

    @Test func shapesRadius() throws {
        let src = size(4000, 3000)
        let circle = try Geometry.plan(
            source: src, request: request(w: 300, h: 200, mode: .fill, shape: .circle), limits: defaultLimits)
        #expect(circle.cornerRadius == 100)
        let capsule = try Geometry.plan(
            source: src, request: request(w: 300, h: 201, mode: .fill, shape: .capsule), limits: defaultLimits)
        #expect(capsule.cornerRadius == 100.5)
        let rounded = try Geometry.plan(
            source: src, request: request(w: 300, h: 200, mode: .fill, dpr: 2, shape: .rounded), limits: defaultLimits)
        #expect(rounded.cornerRadius == 16)  // the default 8, times dpr 2
        let big = try Geometry.plan(
            source: src, request: request(w: 300, h: 200, mode: .fill, shape: .rounded, radius: 500),
            limits: defaultLimits)
        #expect(big.cornerRadius == 100)  // never more than half the short side
        #expect(big.hasAlpha(sourceHasAlpha: false))
    }
}

/// SPEC's maxDimension rule: a box from the source alone is fitted, a client's box is a 400.
@Suite struct MaxDimensionTests {
    @Test func aBoxFromTheSourceAloneIsFittedNotRefused() throws {
        let photo = size(6000, 4000)
        #expect(try planOrCode(photo, request()).get().output == size(4096, 2731))
        #expect(try planOrCode(photo, request(ratio: 1, mode: .fill)).get().output == size(4000, 4000))
        #expect(try planOrCode(size(9000, 3000), request(ratio: 2, mode: .fill)).get().output == size(4096, 2048))
        // dpr cannot push it over: fitted in device pixels.
        #expect(try planOrCode(photo, request(dpr: 2)).get().output == size(4096, 2731))
        // Sized by the client: still a 400, never clamped.
        guard case .failure(let e) = planOrCode(photo, request(w: 5000)) else {
            Issue.record("w=5000 was not refused")
            return
        }
        #expect(e.code == .badParam && e.message.contains("limits.maxDimension"))
    }
}
