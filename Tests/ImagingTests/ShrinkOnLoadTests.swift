import Core
import Foundation
import Imaging
import ImagingTestSupport
import TestSupport
import Testing

/// JPEG shrink-on-load under both values of `images.fastShrinkOnLoad`: the fast rule
/// (sharp's and imgproxy's) by default, libvips' own when it is false. Every case uses a
/// scale at which the two rules load at different sizes, so both code paths run.
/// (`SourceTests` runs its EXIF orientation and CMYK cases under both rules too.)
@Suite struct ShrinkOnLoadTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    static func limits(fast: Bool) -> ImagingLimits { ImagingLimits(fastShrinkOnLoad: fast) }

    @Test func theFastRuleTakesTheLargestFactorTheSmallerScaleAllows() {
        func s(_ w: Int, _ h: Int, _ tw: Int, _ th: Int) -> Int {
            ShrinkOnLoad.fast(from: Size(width: w, height: h), to: Size(width: tw, height: th))
        }
        #expect(s(6028, 3391, 400, 225) == 8)  // 15.07×: libvips' rule would load at 1/4
        #expect(s(6400, 3200, 800, 400) == 8)  // exactly 8×
        #expect(s(6399, 3200, 800, 400) == 4)  // just under 8× on one side
        #expect(s(1920, 1280, 600, 400) == 2)  // 3.2×
        #expect(s(1920, 1280, 960, 640) == 2)
        #expect(s(1920, 1280, 961, 640) == 1)  // under 2×
        #expect(s(100, 100, 300, 300) == 1)  // upscaled
        #expect(s(4000, 1000, 100, 1000) == 1)  // stretch: the smaller scale decides
        #expect(s(10, 10, 0, 5) == 1)
    }

    /// A truncated file is the decode's error (415) under both rules, never a grey half image.
    @Test(arguments: [true, false])
    func aTruncatedJpegIsAnErrorUnderBothRules(fast: Bool) throws {
        let whole = try ImageFile.encode(Fixtures.quadrants(width: 1600, height: 1200), as: .jpeg)
        let t = try Thumbnailer(limits: Self.limits(fast: fast))
        for fraction in [0.3, 0.6, 0.9] {
            let path = try fixtures.write("cut.jpg", Array(whole.prefix(Int(Double(whole.count) * fraction))))
            #expect {
                _ = try t.thumbnail(path: path, request: request("w=150&format=png"), requestLimits: RequestLimits())
            } throws: { error in
                (error as? ImagingError)?.error.code == .unsupportedSource
            }
        }
    }

    /// The shared photo at the benchmark's scale (15×: fast loads at 1/8, libvips at 1/4):
    /// both close to the whole image area-averaged, and not the same pixels, so the key
    /// does choose the path.
    @Test func bothRulesStayCloseToTheWholeImageAndDiffer() throws {
        let path = try Photos.path("big.jpg")
        let full = try ImageFile.decode(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        let (fast, plan) = try thumb(path, "w=400&h=225&format=png", limits: Self.limits(fast: true))
        let (slow, _) = try thumb(path, "w=400&h=225&format=png", limits: Self.limits(fast: false))
        #expect(plan.plan.output == Size(width: 400, height: 225))
        #expect(Size(width: slow.width, height: slow.height) == plan.plan.output)
        let ref = PhotoTests.reference(
            full, resized: plan.plan.resized, window: Rect(x: 0, y: 0, width: 400, height: 225))
        let (dFast, dSlow) = (PhotoTests.meanDifference(fast, ref), PhotoTests.meanDifference(slow, ref))
        // Seen: 1.71 (fast) and 1.08 (libvips' rule), 1.15 between them, in levels of 255.
        #expect(dFast < 2.5 && dSlow < 2.5, "mean differences \(dFast), \(dSlow)")
        #expect(PhotoTests.meanDifference(fast, slow) > 0.1, "the two rules gave the same pixels")
    }
}
