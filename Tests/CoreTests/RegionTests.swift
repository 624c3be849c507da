import Foundation
import TestSupport
import Testing

@testable import Core

/// "Before the geometry": `crop` and `rotate` change what `W0 × H0` is; `flip`, `blur`
/// and `sharpen` do not. Table cases, parse errors, the canonical form, and random plans.
@Suite struct RegionTests {
    static let cases: [(String, Size, Size)] = [
        // query on a 4000×3000 source, the W0×H0 planned on, the output
        ("crop=0.25,0,0.5,1&w=300", size(2000, 3000), size(300, 450)),
        ("crop=0,0,0.5,0.5", size(2000, 1500), size(2000, 1500)),
        ("rotate=90&w=300", size(3000, 4000), size(300, 400)),
        ("rotate=180&w=300", size(4000, 3000), size(300, 225)),
        ("crop=0,0,0.25,1&rotate=270&w=300&ratio=1&mode=fill", size(3000, 1000), size(300, 300)),
        ("flip=hv&w=300", size(4000, 3000), size(300, 225)),
        ("blur=3&w=300", size(4000, 3000), size(300, 225)),
        ("crop=0.9,0.9,0.1,0.1&w=1000", size(400, 300), size(400, 300)),
    ]

    @Test(arguments: cases)
    func theRegionAndTheTurnAreTheNewSource(query: String, source: Size, output: Size) throws {
        let r = try ThumbRequest.parse(query: "src=a.jpg&" + query, limits: defaultLimits)
        let plan = try planOrCode(size(4000, 3000), r).get()
        #expect(plan.source == source && plan.output == output, "\(plan.source) → \(plan.output)")
        #expect(plan.upright == size(4000, 3000))
        Invariants.check(plan, r, label: query)
    }

    @Test func badOptionsAre400sNamingTheParameter() {
        for (query, words) in [
            ("crop=0.5,0,0.6,1", "leaves the image"), ("crop=0,0,0,1", "crop must be x,y,w,h"),
            ("crop=0,0,1", "crop must be x,y,w,h"), ("crop=-0.1,0,0.5,0.5", "crop must be"),
            ("rotate=45", "rotate must be 90, 180 or 270"), ("rotate=360", "rotate must be"),
            ("flip=x", "flip must be one of h, v, hv"), ("blur=0.1", "blur must be a decimal from 0.3 to 100"),
            ("sharpen=11", "sharpen must be a decimal from 0.3 to 10"),
            ("blur=2&sharpen=1", "blur and sharpen are both given"), ("frames=0", "frames must be 1"),
            ("frames=101", "or, on a video, 2 to 100"), ("t=-1", "t must be a decimal from 0"),
        ] {
            do {
                _ = try ThumbRequest.parse(query: "src=a.jpg&w=100&" + query, limits: defaultLimits)
                Issue.record("\(query) was accepted")
            } catch {
                #expect(error.code == .badParam && error.message.contains(words), "\(query): \(error.message)")
            }
        }
    }

    @Test func theCanonicalFormHoldsTheOptions() throws {
        let a = try ThumbRequest.parse(
            query: "src=a.jpg&w=100&crop=0.25,0,0.50,1&rotate=090&blur=2.0", limits: defaultLimits)
        let b = try ThumbRequest.parse(
            query: "blur=2&rotate=90&crop=0.25,0,0.5,1&w=100&src=a.jpg", limits: defaultLimits)
        #expect(a.canonical == b.canonical)
        #expect(a.canonical.contains("crop=0.25%2C0%2C0.5%2C1") && a.canonical.contains("rotate=90"))
        let plain = try ThumbRequest.parse(query: "src=a.jpg&w=100", limits: defaultLimits)
        #expect(plain.canonical != a.canonical)
    }

    /// 5,000 random regions and turns on random sources: the region lies inside the
    /// upright source, the planned source is the region (turned), every invariant holds.
    @Test func randomRegionsKeepEveryRule() {
        var g = SeededRandom(seed: 0x5EC7_10)
        var planned = 0
        for i in 0..<5_000 {
            let upright = size(Int.random(in: 1...8000, using: &g), Int.random(in: 1...8000, using: &g))
            var r = GeometryPropertyTests.randomRequest(&g)
            let x = Double.random(in: 0..<1, using: &g)
            let y = Double.random(in: 0..<1, using: &g)
            r.region = Region(
                x: x, y: y, width: max(1e-6, Double.random(in: 0...1, using: &g) * (1 - x)),
                height: max(1e-6, Double.random(in: 0...1, using: &g) * (1 - y)))
            r.rotate = [0, 90, 180, 270].randomElement(using: &g) ?? 0
            let label = "#\(i) \(upright) \(r.canonical)"
            guard case .success(let plan) = planOrCode(upright, r) else { continue }
            planned += 1
            let region = plan.region ?? Rect(x: 0, y: 0, width: 0, height: 0)
            #expect(
                region.x >= 0 && region.y >= 0 && region.width >= 1 && region.height >= 1
                    && region.x + region.width <= upright.width && region.y + region.height <= upright.height,
                "\(label): \(region)")
            let turned = r.rotate == 90 || r.rotate == 270
            #expect(plan.source == (turned ? size(region.height, region.width) : region.size), "\(label)")
            Invariants.check(plan, r, label: label)
        }
        #expect(planned > 2_500)
    }
}
