import Foundation
import TestSupport
import Testing

@testable import Core

/// SPEC's geometry over 20,000 seeded random requests: sizes, aspect, no-upscale,
/// crop and placement bounds, limits, and no trap for any input.
@Suite struct GeometryPropertyTests {
    static let count = 20_000

    static func randomSource(_ g: inout SeededRandom) -> Size {
        func side() -> Int {
            switch Int.random(in: 0..<20, using: &g) {
            case 0: 1
            case 1: Int.random(in: 1...10, using: &g)
            case 2: Int.random(in: 10_000...1_000_000, using: &g)
            case 3: [Int.max, Int.max / 2, 1 << 40, 1_000_000_000_000, 0, -1, Int.min].randomElement(using: &g) ?? 1
            default: Int.random(in: 1...8000, using: &g)
            }
        }
        return Size(width: side(), height: side())
    }

    static func randomRequest(_ g: inout SeededRandom) -> ThumbRequest {
        var r = ThumbRequest(src: "a.jpg")
        let which = Int.random(in: 0..<8, using: &g)
        func dim() -> Int {
            Bool.random(using: &g) ? Int.random(in: 1...4096, using: &g) : Int.random(in: 1...600, using: &g)
        }
        func ratio() -> Ratio? { Ratio(pow(10, Double.random(in: -4...4, using: &g))) }
        switch which {
        case 0: (r.width, r.height) = (dim(), dim())
        case 1: (r.width, r.ratio) = (dim(), ratio())
        case 2: (r.height, r.ratio) = (dim(), ratio())
        case 3: r.width = dim()
        case 4: r.height = dim()
        case 5: r.ratio = ratio()
        case 6: break
        default: (r.width, r.height, r.ratio) = (dim(), dim(), ratio())  // must be an error
        }
        r.mode = Mode.allCases.randomElement(using: &g) ?? .fit
        r.gravity =
            (r.mode == .fill ? Gravity.allCases : Gravity.allCases.filter(\.isCompass)).randomElement(using: &g)
            ?? .center
        r.focusX = Double.random(in: 0...1, using: &g)
        r.focusY = Double.random(in: 0...1, using: &g)
        r.upscale = Bool.random(using: &g)
        r.dpr = Bool.random(using: &g) ? 1 : (Double(Int.random(in: 100...400, using: &g)) / 100)
        r.shape = Bool.random(using: &g) ? nil : Shape.allCases.randomElement(using: &g)
        if r.shape == .rounded, Bool.random(using: &g) { r.radius = Int.random(in: 0...4096, using: &g) }
        return r
    }

    /// The ratio the client asked for (given, from w/h, or the source's).
    static func requestedRatio(_ r: ThumbRequest, _ src: Size) -> Double {
        if let q = r.ratio { return q.value }
        if let w = r.width, let h = r.height { return Double(w) / Double(h) }
        return Double(src.width) / Double(src.height)
    }

    /// Whether a side of the CSS box, computed exactly, is below ½ and so is clamped to 1.
    static func cssSideRoundsToZero(_ r: ThumbRequest, _ src: Size) -> Bool {
        let w0 = Double(src.width)
        let h0 = Double(src.height)
        let derived: Double? =
            switch (r.width, r.height, r.ratio) {
            case (let w?, nil, let q?): Double(w) / q.value
            case (nil, let h?, let q?): Double(h) * q.value
            case (let w?, nil, nil): Double(w) * h0 / w0
            case (nil, let h?, nil): Double(h) * w0 / h0
            case (nil, nil, let q?): w0 / h0 > q.value ? h0 * q.value : w0 / q.value
            default: nil
            }
        return (derived ?? 1) < 0.5
    }

    @Test func randomRequestsKeepEveryRule() {
        var g = SeededRandom(seed: 0xA5BE_C7)
        var planned = 0
        var refused = 0
        for i in 0..<Self.count {
            let src = Self.randomSource(&g)
            let req = Self.randomRequest(&g)
            let limits = RequestLimits(
                maxDimension: Bool.random(using: &g) ? 4096 : Int.random(in: 1...65535, using: &g), maxDpr: 4)
            let label = "#\(i) \(src) \(req.canonical)"
            switch planOrCode(src, req, limits) {
            case .failure(let e):
                refused += 1
                let validSource =
                    src.width >= 1 && src.height >= 1 && src.width <= 1_000_000_000_000
                    && src.height <= 1_000_000_000_000
                let allThree = req.width != nil && req.height != nil && req.ratio != nil
                switch e.code {
                case .unsupportedSource: #expect(!validSource, "\(label): \(e)")
                case .badParam:
                    #expect(validSource && (allThree || e.message.contains("limits.maxDimension")), "\(label): \(e)")
                case .sourceTooLarge: #expect(req.upscale && req.mode == .fill, "\(label): \(e)")
                default: Issue.record("\(label): unexpected \(e)")
                }
            case .success(let plan):
                planned += 1
                #expect(req.width == nil || req.height == nil || req.ratio == nil, "\(label): all three accepted")
                Invariants.check(plan, req, label: label)
                #expect(
                    plan.output.width <= limits.maxDimension && plan.output.height <= limits.maxDimension, "\(label)")
                if plan.mode != .fit {
                    let q = Self.requestedRatio(req, src)
                    if Self.cssSideRoundsToZero(req, src) {
                        // The box's short side was below half a CSS pixel and became 1:
                        // the output's short side is that one pixel times dpr, at most.
                        let short = min(plan.output.width, plan.output.height)
                        #expect(
                            Double(short) <= (req.dpr).rounded(.toNearestOrAwayFromZero), "\(label): \(plan.output)")
                    } else {
                        // Rounding the box (±½ px), applying dpr (±½ px, and the first
                        // error times dpr) and dividing by s for no-upscale (±½ px) moves
                        // each side off the exact ratio by at most 1 + dpr/2 pixels.
                        let tolerance = (1 + 0.5 * req.dpr) * (1 + q)
                        let off = abs(Double(plan.output.width) - q * Double(plan.output.height))
                        #expect(
                            off <= tolerance, "\(label): \(plan.output) is off the ratio \(q) by \(off) > \(tolerance)")
                    }
                }
            }
        }
        // The generator must exercise both sides; a run that plans nothing proves nothing.
        #expect(planned > Self.count / 2)
        #expect(refused > Self.count / 20)
    }

    @Test func extremeRatiosStayInsideTheRules() throws {
        for q in [0.001, 1000, 0.0001, 10_000] {
            for mode in Mode.allCases {
                for src in [size(4000, 3000), size(1, 1), size(1, 10000), size(10000, 1)] {
                    var req = request(w: q < 1 ? 2 : nil, h: q < 1 ? nil : 2, ratio: q, mode: mode)
                    let label = "ratio \(q) \(mode) \(src)"
                    if case .success(let plan) = planOrCode(src, req) { Invariants.check(plan, req, label: label) }
                    req.upscale = true
                    if case .success(let plan) = planOrCode(src, req) {
                        Invariants.check(plan, req, label: label + " upscale")
                    }
                }
            }
        }
    }
}
