import Core

/// thumbor's filters that move pixels after the resize (`rotate`, `fill`, `proportion`,
/// `upscale`), as steps of the plan (`ThumborGeometry+Plan.swift`) on the image as it stands.
extension ThumborGeometry {
    /// The image as the filters after the resize leave it.
    struct Stage {
        /// Its size.
        var image: Size
        /// The canvas `fill` put it on: its size, where the image sits on it, what fills it.
        var canvas: (size: Size, at: (x: Int, y: Int), fill: Fill)?
        /// How far it has turned, counter-clockwise.
        var turned = 0
        /// The resize and the window that make it, turned and scaled with it.
        var resized: Size
        var window: Rect?
    }

    /// After the flips: the filters that move pixels, in the URL's order, on the image as it
    /// stands (its size, the canvas it is on, how far it has turned).
    func stepped(_ sized: Sized) throws(AspectError) -> Stage {
        var stage = Stage(image: sized.window?.size ?? sized.resized, resized: sized.resized, window: sized.window)
        for step in steps {
            switch step {
            case .rotate(let n): Self.rotateStep(&stage, by: n)
            case .fill(let f): try Self.fillStep(&stage, f, requestW: sized.requestW, requestH: sized.requestH)
            case .proportion(let v): Self.proportionStep(&stage, by: v)
            case .upscale: Self.upscaleStep(&stage, requestW: sized.requestW, requestH: sized.requestH)
            }
        }
        return stage
    }

    /// `rotate(n)`: the image turned counter-clockwise by `n`, on its canvas turned with it.
    private static func rotateStep(_ stage: inout Stage, by n: Int) {
        let quarter = n % 180 == 90
        stage.turned = (stage.turned + n) % 360
        if quarter { stage.image = Size(width: stage.image.height, height: stage.image.width) }
        if var c = stage.canvas {
            let (cw, ch) = (c.size.width, c.size.height)
            let (x, y) = c.at
            switch n {
            case 90: c.at = (y, cw - x - stage.image.height)
            case 180: c.at = (cw - x - stage.image.width, ch - y - stage.image.height)
            case 270: c.at = (ch - y - stage.image.width, x)
            default: break
            }
            if quarter { c.size = Size(width: ch, height: cw) }
            stage.canvas = c
        }
        if quarter {
            stage.resized = Size(width: stage.resized.height, height: stage.resized.width)
            stage.window = stage.window.map { Rect(x: $0.y, y: $0.x, width: $0.height, height: $0.width) }
        }
    }

    /// `fill(…)`: the image centred (as Python's `//` floors) on a canvas of the request's
    /// sides, its own where none was asked.
    private static func fillStep(_ stage: inout Stage, _ f: Fill, requestW: Double, requestH: Double)
        throws(AspectError)
    {
        guard stage.canvas == nil else {
            throw AspectError(.badParam, "filters: fill is given twice; give it once")
        }
        let current = stage.image
        let target = Size(
            width: requestW > 0 ? Self.pixels(requestW) : current.width,
            height: requestH > 0 ? Self.pixels(requestH) : current.height)
        stage.canvas = (
            target,
            (Self.floorHalf(target.width - current.width), Self.floorHalf(target.height - current.height)), f
        )
    }

    /// `proportion(v)`: the image (or its canvas, and the image on it) scaled by `v`,
    /// unless a side would go under a pixel.
    private static func proportionStep(_ stage: inout Stage, by v: Double) {
        let current = stage.canvas?.size ?? stage.image
        let next = (Double(current.width) * v, Double(current.height) * v)
        guard v > 0, v <= 1, next.0 >= 1, next.1 >= 1 else { return }
        let scaled = Size(width: Self.pixels(next.0), height: Self.pixels(next.1))
        if var c = stage.canvas {
            c.at = (Rounding.int((Double(c.at.x) * v).rounded()), Rounding.int((Double(c.at.y) * v).rounded()))
            c.size = scaled
            stage.canvas = c
            stage.image = Size(
                width: Self.pixels(Double(stage.image.width) * v), height: Self.pixels(Double(stage.image.height) * v))
        } else {
            stage.image = scaled
        }
        (stage.resized, stage.window) = Self.rescaled(stage.resized, stage.window, to: stage.image)
    }

    /// `upscale()`: an image smaller than both asked sides enlarged to fit them; not on a
    /// canvas.
    private static func upscaleStep(_ stage: inout Stage, requestW: Double, requestH: Double) {
        guard stage.canvas == nil, requestW > 0, requestH > 0, Double(stage.image.width) < requestW,
            Double(stage.image.height) < requestH
        else { return }
        let (iw, ih) = (Double(stage.image.width), Double(stage.image.height))
        stage.image =
            iw / requestW >= ih / requestH
            ? Size(width: Self.pixels(requestW), height: Self.pixels(ih * requestW / iw))
            : Size(width: Self.pixels(iw * requestH / ih), height: Self.pixels(requestH))
        (stage.resized, stage.window) = Self.rescaled(stage.resized, stage.window, to: stage.image)
    }
}
