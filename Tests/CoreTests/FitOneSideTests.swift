import TestSupport
import Testing

@testable import Core

/// `fit` (and `pad`) with `w` alone or `h` alone and a `dpr` (SPEC: Geometry, the scale):
/// the side given sets the scale, the other follows the source, and the picture is never
/// distorted by the CSS box's own rounding (issue 50).
@Suite struct FitOneSideTests {
    static let limits = RequestLimits(maxDimension: 100_000_000, maxDpr: 4)

    /// The cases a user hit: each answer is `round(W0·s) × round(H0·s)`.
    @Test(
        arguments: [
            (size(333, 111), 7, nil, 2.5, size(18, 6)),  // was 18×5, squeezed to 3.6:1
            (size(427, 640), 33, nil, 3.0, size(99, 148)),  // was 99×147
            (size(300, 500), 128, nil, 3.0, size(300, 500)),  // capped by no-upscaling; was 300×499
            (size(111, 333), nil, 7, 2.5, size(6, 18)),  // h alone, the same picture turned
            (size(640, 427), 50, nil, 1.0, size(50, 33)),
        ] as [(Size, Int?, Int?, Double, Size)])
    func theCasesUsersHit(source: Size, w: Int?, h: Int?, dpr: Double, expected: Size) throws {
        for mode in [Mode.fit, .pad] {
            let plan = try Geometry.plan(
                source: source, request: request(w: w, h: h, mode: mode, dpr: dpr), limits: Self.limits)
            #expect(plan.output == expected, "\(mode)")
        }
    }

    /// Over seeded random sources, one side given, `dpr` 1…4 and both upscale settings:
    /// the side given is `round(side·dpr)` unless no-upscaling caps the output at the
    /// source's own size, and the other side is the source's ratio applied to it, exactly
    /// as SPEC's `round(H0·s)` (so the output's ratio is the source's within rounding).
    @Test func oneSideAndDprKeepTheSourcesRatio() throws {
        var g = SeededRandom(seed: 0x50_F17)
        var capped = 0
        for i in 0..<20_000 {
            let src = size(Int.random(in: 1...8000, using: &g), Int.random(in: 1...8000, using: &g))
            let side = Int.random(in: 1...(Bool.random(using: &g) ? 64 : 2000), using: &g)
            let widthGiven = Bool.random(using: &g)
            let dpr = Double(Int.random(in: 100...400, using: &g)) / 100
            let upscale = Bool.random(using: &g)
            let mode: Mode = Bool.random(using: &g) ? .fit : .pad
            let r = request(
                w: widthGiven ? side : nil, h: widthGiven ? nil : side, mode: mode, upscale: upscale, dpr: dpr)
            let label = "#\(i) \(src) \(r.canonical)"
            let out = try Geometry.plan(source: src, request: r, limits: Self.limits).output
            let (given, other) = widthGiven ? (out.width, out.height) : (out.height, out.width)
            let (g0, o0) = widthGiven ? (src.width, src.height) : (src.height, src.width)
            let asked = Int((Double(side) * dpr).rounded(.toNearestOrAwayFromZero))
            if !upscale, asked > g0 {
                capped += 1
                #expect(out == src, "\(label): \(out)")
                continue
            }
            #expect(given == asked, "\(label): \(out)")
            // round(o0 · given / g0), at least 1, from the integers.
            let exact = Double(o0) * Double(given) / Double(g0)
            #expect(other == max(1, Int(exact.rounded(.toNearestOrAwayFromZero))), "\(label): \(out)")
            #expect(abs(Double(other) - exact) <= 0.5 || other == 1, "\(label): \(out) off the source's ratio")
        }
        #expect(capped > 100)
    }
}
