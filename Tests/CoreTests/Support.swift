@testable import Core

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
