@testable import Core

/// SplitMix64: a small seeded generator, so every random test replays exactly.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func request(
    _ src: String = "a.jpg", w: Int? = nil, h: Int? = nil, ratio: Double? = nil, mode: Mode = .fit,
    gravity: Gravity = .center, upscale: Bool = false, dpr: Double = 1, shape: Shape? = nil, radius: Int? = nil
) -> ThumbRequest {
    var r = ThumbRequest(src: src)
    r.width = w
    r.height = h
    r.ratio = ratio.flatMap(Ratio.init)
    r.mode = mode
    r.gravity = gravity
    r.upscale = upscale
    r.dpr = dpr
    r.shape = shape
    r.radius = radius
    return r
}

func size(_ w: Int, _ h: Int) -> Size { Size(width: w, height: h) }

let defaultLimits = RequestLimits(maxDimension: 4096, maxDpr: 4)

/// The plan, or the error's code.
func planOrCode(_ source: Size, _ r: ThumbRequest, _ limits: RequestLimits = defaultLimits) -> Result<Plan, AspectError>
{
    do throws(AspectError) {
        return .success(try Geometry.plan(source: source, request: r, limits: limits))
    } catch {
        return .failure(error)
    }
}
