import Testing

@testable import Core

/// Every mode × upscale × dpr on landscape, portrait, square, 1×1 and 1×10000 sources,
/// against SPEC restated as plainly as possible (the oracle below), and SPEC's
/// invariants checked on each plan.
@Suite struct GeometryMatrixTests {
    struct Given: Sendable, CustomTestStringConvertible {
        let w: Int?, h: Int?, ratio: Double?
        var testDescription: String {
            [w.map { "w=\($0)" }, h.map { "h=\($0)" }, ratio.map { "ratio=\($0)" }].compactMap { $0 }.joined(
                separator: "&")
        }
    }

    static let sources = [size(4000, 3000), size(3000, 4000), size(1000, 1000), size(1, 1), size(1, 10000)]
    static let givens: [Given] = [
        Given(w: 300, h: 200, ratio: nil), Given(w: 300, h: nil, ratio: 4.0 / 3),
        Given(w: nil, h: 300, ratio: 16.0 / 9),
        Given(w: 300, h: nil, ratio: nil), Given(w: nil, h: 300, ratio: nil), Given(w: nil, h: nil, ratio: 1),
        Given(w: nil, h: nil, ratio: nil), Given(w: 2, h: nil, ratio: 0.001), Given(w: nil, h: 3, ratio: 1000),
        Given(w: 4096, h: 1, ratio: nil), Given(w: 1, h: 4096, ratio: nil),
    ]

    /// SPEC's rounding, written again.
    static func r(_ x: Double) -> Int { max(1, Int(x.rounded(.toNearestOrAwayFromZero))) }

    /// `a / b` for positive integers, rounded half up, at least 1: SPEC's rounding on an
    /// exact fraction, in integers only.
    static func ri(_ a: Int, _ b: Int) -> Int { max(1, (2 * a + b) / (2 * b)) }

    /// The output size SPEC gives, or `nil` for an error 400.
    static func oracle(_ src: Size, _ g: Given, _ mode: Mode, _ upscale: Bool, _ dpr: Double, max: Int = 4096) -> Size?
    {
        let srcW = Double(src.width)
        let srcH = Double(src.height)
        var bw: Double
        var bh: Double
        if let w = g.w, let h = g.h {
            (bw, bh) = (Double(w), Double(h))
        } else if let w = g.w, let q = g.ratio {
            (bw, bh) = (Double(w), Double(r(Double(w) / q)))
        } else if let h = g.h, let q = g.ratio {
            (bw, bh) = (Double(r(Double(h) * q)), Double(h))
        } else if let w = g.w {
            (bw, bh) = (Double(w), Double(r(Double(w) * srcH / srcW)))
        } else if let h = g.h {
            (bw, bh) = (Double(r(Double(h) * srcW / srcH)), Double(h))
        } else if let q = g.ratio {
            (bw, bh) = srcW / srcH > q ? (Double(r(srcH * q)), srcH) : (srcW, Double(r(srcW / q)))
        } else {
            (bw, bh) = (srcW, srcH)
        }
        bw = Double(r(bw * dpr))
        bh = Double(r(bh * dpr))
        // fit and pad with one side given: the other follows the source from the given
        // side in device pixels (SPEC: the scale, "never a distorted 18×5").
        if mode == .fit || mode == .pad, g.ratio == nil, (g.w == nil) != (g.h == nil) {
            if g.w != nil { bh = Double(r(bw * srcH / srcW)) } else { bw = Double(r(bh * srcW / srcH)) }
        }
        // A box from the source alone is fitted into max × max, in device pixels.
        if g.w == nil, g.h == nil, bw > Double(max) || bh > Double(max) {
            let fit = min(Double(max) / bw, Double(max) / bh)
            (bw, bh) = (Double(min(r(bw * fit), max)), Double(min(r(bh * fit), max)))
        }
        if bw > Double(max) || bh > Double(max) { return nil }
        // s is bw / W0 or bh / H0: which, by the exact fractions (bw·H0 against bh·W0).
        let (w0, h0) = (src.width, src.height)
        let widthFirst = Int(bw) * h0 <= Int(bh) * w0
        let widthSets = mode == .fit || mode == .pad ? widthFirst : !widthFirst
        let s = widthSets ? bw / srcW : bh / srcH
        if !upscale && s > 1 {
            (bw, bh) =
                widthSets ? (srcW, Double(ri(Int(bh) * w0, Int(bw)))) : (Double(ri(Int(bw) * h0, Int(bh))), srcH)
        }
        switch mode {
        case .fit:
            return widthSets ? size(Int(bw), ri(h0 * Int(bw), w0)) : size(ri(w0 * Int(bh), h0), Int(bh))
        case .fill, .pad, .stretch: return size(Int(bw), Int(bh))
        }
    }

    @Test(arguments: sources, givens)
    func everyModeUpscaleAndDpr(source: Size, given: Given) {
        for mode in Mode.allCases {
            for upscale in [false, true] {
                for dpr in [1.0, 2, 3] {
                    let req = request(
                        w: given.w, h: given.h, ratio: given.ratio, mode: mode, upscale: upscale, dpr: dpr)
                    let expected = Self.oracle(source, given, mode, upscale, dpr)
                    let label = "\(source) \(given.testDescription) \(mode) upscale=\(upscale) dpr=\(dpr)"
                    switch planOrCode(source, req) {
                    case .failure(let e):
                        #expect(expected == nil, "\(label): unexpected \(e)")
                        #expect(e.code == .badParam, "\(label)")
                    case .success(let plan):
                        #expect(plan.output == expected, "\(label)")
                        Invariants.check(plan, req, label: label)
                    }
                }
            }
        }
    }
}

/// SPEC's invariants, checked on any plan.
enum Invariants {
    static func check(_ plan: Plan, _ req: ThumbRequest, label: String) {
        let out = plan.output
        let src = plan.source
        #expect(out.width >= 1 && out.height >= 1, "\(label): a side below 1")
        #expect(plan.resized.width >= 1 && plan.resized.height >= 1, "\(label)")
        switch plan.mode {
        case .fit:
            #expect(out.width <= plan.box.width && out.height <= plan.box.height, "\(label): fit exceeds the box")
            #expect(out.width == plan.box.width || out.height == plan.box.height, "\(label): fit touches no side")
            #expect(plan.resized == out, "\(label)")
        case .fill:
            #expect(out == plan.box, "\(label)")
            if let c = plan.crop {
                #expect(c.size == out, "\(label)")
                #expect(
                    c.x >= 0 && c.y >= 0 && c.x + c.width <= plan.resized.width
                        && c.y + c.height <= plan.resized.height,
                    "\(label): crop \(c) outside \(plan.resized)")
            } else {
                Issue.record("\(label): fill without a crop window")
            }
        case .pad:
            #expect(out == plan.box, "\(label)")
            if let p = plan.placement {
                #expect(p.size == plan.resized, "\(label)")
                #expect(
                    p.x >= 0 && p.y >= 0 && p.x + p.width <= out.width && p.y + p.height <= out.height,
                    "\(label): placement \(p) outside \(out)")
                #expect(p.width == out.width || p.height == out.height, "\(label): padded image touches no side")
            } else {
                Issue.record("\(label): pad without a placement")
            }
        case .stretch:
            #expect(out == plan.box && plan.resized == out, "\(label)")
        }
        if !req.upscale {
            #expect(
                plan.resized.width <= src.width && plan.resized.height <= src.height,
                "\(label): \(plan.resized) needs more pixels than \(src)")
            #expect(plan.scale <= 1, "\(label)")
        }
        #expect(plan.cornerRadius >= 0 && plan.cornerRadius <= Double(min(out.width, out.height)) / 2, "\(label)")
    }
}
