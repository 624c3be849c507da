import Core
import Foundation

/// imgproxy's gravity: a compass value (with offsets), `sm` (libvips' attention), a
/// focus point `fp:x:y`, or `obj` (imgproxy Pro's object detection: here faces, `obj:face`).
public struct ImgproxyGravity: Equatable, Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        case ce, no, so, ea, we, noea, nowe, soea, sowe, sm, fp, obj

        /// Found in the picture at render time, not placed by numbers: `sm` and `obj`.
        var isFound: Bool { self == .sm || self == .obj }
    }

    public var kind: Kind
    /// Offsets: pixels (× dpr) when at least 1 in size, else a fraction of the image; the
    /// focus point's coordinates for `fp`.
    public var x: Double
    public var y: Double

    public init(_ kind: Kind = .ce, x: Double = 0, y: Double = 0) {
        self.kind = kind
        self.x = x
        self.y = y
    }

    var text: String {
        kind.isFound ? kind.rawValue : "\(kind.rawValue):\(decimalString(x)):\(decimalString(y))"
    }
}

/// The overlay `watermark:opacity:position:x:y:scale` asks for, on the first configured
/// watermark (imgproxy has one).
public struct ImgproxyWatermark: Equatable, Sendable {
    public var name: String
    public var opacity: Double
    public var position: ImgproxyGravity
    /// 0: the image's own size; else fitted into this fraction of the result's sides.
    public var scale: Double
}

/// What imgproxy's options say of the geometry, planned by imgproxy's rules (its
/// `processing/prepare.go`), not Aspect's: a dialect request that the native API cannot
/// say carries one, and it is part of the canonical form.
public struct ImgproxyGeometry: Equatable, Sendable {
    public enum Resize: String, Sendable, CaseIterable {
        case fit, fill
        case fillDown = "fill-down"
        case force, auto
    }

    public var width = 0
    public var height = 0
    public var resize = Resize.fit
    public var enlarge = false
    public var extend = false
    public var extendGravity = ImgproxyGravity()
    public var extendAspectRatio = false
    public var extendAspectRatioGravity = ImgproxyGravity()
    public var gravity = ImgproxyGravity()
    /// `crop:w:h`: pixels when at least 1, a fraction of the source when below, 0: all.
    public var cropWidth = 0.0
    public var cropHeight = 0.0
    /// nil: the crop follows `gravity`.
    public var cropGravity: ImgproxyGravity?
    public var minWidth = 0
    public var minHeight = 0
    public var zoomWidth = 1.0
    public var zoomHeight = 1.0
    public var dpr = 1.0
    /// T, R, B, L in CSS pixels.
    public var padding = [0, 0, 0, 0]
    public var rotate = 0
    public var flipHorizontal = false
    public var flipVertical = false
    public var watermark: ImgproxyWatermark?

    public init() {}

    /// `flip`'s two booleans as the native `flip`.
    public var flip: Flip? {
        flipHorizontal && flipVertical ? .hv : flipHorizontal ? .h : flipVertical ? .v : nil
    }

    /// One spelling of every field, for the canonical form.
    public var text: String {
        var parts = [
            "rs:\(resize.rawValue):\(width):\(height):\(enlarge ? 1 : 0)",
            "ex:\(extend ? 1 : 0):\(extendGravity.text)",
            "exar:\(extendAspectRatio ? 1 : 0):\(extendAspectRatioGravity.text)",
            "g:\(gravity.text)",
            "c:\(decimalString(cropWidth)):\(decimalString(cropHeight)):\(cropGravity?.text ?? "g")",
            "min:\(minWidth):\(minHeight)", "z:\(decimalString(zoomWidth)):\(decimalString(zoomHeight))",
            "dpr:\(decimalString(dpr))", "pd:\(padding.map(String.init).joined(separator: ":"))",
            "rot:\(rotate)", "fl:\(flipHorizontal ? 1 : 0):\(flipVertical ? 1 : 0)",
        ]
        if let w = watermark {
            parts.append(
                "wm:\(w.name):\(decimalString(w.opacity)):\(w.position.text):\(decimalString(w.scale))")
        }
        return parts.joined(separator: "/")
    }
}

/// imgproxy's integer helpers (`imath`): Go's `math.Round` is half away from zero,
/// `math.RoundToEven` half to even.
enum IMath {
    static func round(_ x: Double) -> Int { Rounding.int(x.rounded(.toNearestOrAwayFromZero)) }
    static func roundToEven(_ x: Double) -> Int { Rounding.int(x.rounded(.toNearestOrEven)) }
    static func scale(_ a: Int, _ s: Double) -> Int { a == 0 ? 0 : round(Double(a) * s) }
    static func scaleToEven(_ a: Int, _ s: Double) -> Int { a == 0 ? 0 : roundToEven(Double(a) * s) }
    static func shrinkToEven(_ a: Int, _ s: Double) -> Int { a == 0 ? 0 : roundToEven(Double(a) / s) }
    static func minNonZero(_ a: Int, _ b: Int) -> Int { a == 0 ? b : b == 0 ? a : min(a, b) }

    /// `calcPosition`: where an `inner` box goes in an `outer` one by `gravity`, offsets
    /// times `dpr`; inside it unless `overflow`.
    static func position(
        _ outer: Size, _ inner: Size, _ g: ImgproxyGravity, dpr: Double, overflow: Bool = false
    ) -> (x: Int, y: Int) {
        var left: Int
        var top: Int
        if g.kind == .fp {
            left = scaleToEven(outer.width, g.x) - inner.width / 2
            top = scaleToEven(outer.height, g.y) - inner.height / 2
        } else {
            let offX = abs(g.x) >= 1 ? roundToEven(g.x * dpr) : scaleToEven(outer.width, g.x)
            let offY = abs(g.y) >= 1 ? roundToEven(g.y * dpr) : scaleToEven(outer.height, g.y)
            left = shrinkToEven(outer.width - inner.width + 1, 2) + offX
            top = shrinkToEven(outer.height - inner.height + 1, 2) + offY
            if [.no, .noea, .nowe].contains(g.kind) { top = offY }
            if [.ea, .noea, .soea].contains(g.kind) { left = outer.width - inner.width - offX }
            if [.so, .soea, .sowe].contains(g.kind) { top = outer.height - inner.height - offY }
            if [.we, .nowe, .sowe].contains(g.kind) { left = offX }
        }
        let (minX, maxX) = overflow ? (-inner.width + 1, outer.width - 1) : (0, outer.width - inner.width)
        let (minY, maxY) = overflow ? (-inner.height + 1, outer.height - 1) : (0, outer.height - inner.height)
        return (max(minX, min(left, maxX)), max(minY, min(top, maxY)))
    }
}

extension ImgproxyGeometry {
    /// The sizes imgproxy computes for a source of `src` pixels (after its rotation), as
    /// `prepare.go`'s `calcScale` and `calcSizes` do.
    struct Sizes: Equatable {
        var wScale = 1.0, hScale = 1.0, dprScale = 1.0
        var target = Size(width: 0, height: 0)
        var scaled = Size(width: 0, height: 0)
        var resultCrop = Size(width: 0, height: 0)
        var extendAspectRatio = Size(width: 0, height: 0)
    }

    /// `CalcCropSize`.
    static func cropSize(_ original: Int, _ crop: Double) -> Int {
        crop == 0 ? 0 : crop >= 1 ? Rounding.int(crop) : max(1, IMath.scale(original, crop))
    }

    func sizes(_ src: Size, isVector: Bool) -> Sizes {
        var s = Sizes()
        var wShrink = 1.0
        var hShrink = 1.0
        let (srcW, srcH) = (Double(src.width), Double(src.height))
        let dstW = width == 0 ? srcW : Double(width)
        let dstH = height == 0 ? srcH : Double(height)
        if dstW != srcW { wShrink = srcW / dstW }
        if dstH != srcH { hShrink = srcH / dstH }
        if wShrink != 1 || hShrink != 1 {
            var rt = resize
            if rt == .auto {
                let (srcD, dstD) = (srcW - srcH, dstW - dstH)
                rt = (srcD >= 0 && dstD >= 0) || (srcD < 0 && dstD < 0) ? .fill : .fit
            }
            if width == 0, rt != .force {
                wShrink = hShrink
            } else if height == 0, rt != .force {
                hShrink = wShrink
            } else if rt == .fit {
                wShrink = max(wShrink, hShrink)
                hShrink = wShrink
            } else if rt == .fill || rt == .fillDown {
                wShrink = min(wShrink, hShrink)
                hShrink = wShrink
            }
        }
        wShrink /= zoomWidth
        hShrink /= zoomHeight
        s.dprScale = dpr
        if !enlarge, !isVector {
            let minShrink = min(wShrink, hShrink)
            if minShrink < 1 {
                wShrink /= minShrink
                hShrink /= minShrink
                if !extend { s.dprScale /= minShrink }
            }
            s.dprScale = min(s.dprScale, min(wShrink, hShrink))
        }
        if minWidth > 0, srcW / Double(minWidth) < wShrink {
            let minShrink = srcW / Double(minWidth)
            hShrink /= wShrink / minShrink
            wShrink = minShrink
        }
        if minHeight > 0, srcH / Double(minHeight) < hShrink {
            let minShrink = srcH / Double(minHeight)
            wShrink /= hShrink / minShrink
            hShrink = minShrink
        }
        wShrink /= s.dprScale
        hShrink /= s.dprScale
        wShrink = min(wShrink, srcW)
        hShrink = min(hShrink, srcH)
        s.wScale = 1 / wShrink
        s.hScale = 1 / hShrink

        // calcSizes
        s.target = Size(
            width: IMath.scale(width, s.dprScale * zoomWidth), height: IMath.scale(height, s.dprScale * zoomHeight))
        s.scaled = Size(width: IMath.scale(src.width, s.wScale), height: IMath.scale(src.height, s.hScale))
        s.resultCrop = s.target
        if resize == .fillDown, !enlarge {
            let diffW = Double(s.target.width) / Double(s.scaled.width)
            let diffH = Double(s.target.height) / Double(s.scaled.height)
            if diffW > diffH, diffW > 1 {
                s.resultCrop = Size(
                    width: s.scaled.width,
                    height: IMath.scale(s.scaled.width, Double(s.target.height) / Double(s.target.width)))
            } else if diffH > diffW, diffH > 1 {
                s.resultCrop = Size(
                    width: IMath.scale(s.scaled.height, Double(s.target.width) / Double(s.target.height)),
                    height: s.scaled.height)
            }
        }
        if extendAspectRatio, s.target.width > 0, s.target.height > 0 {
            let outW = IMath.minNonZero(s.scaled.width, s.resultCrop.width)
            let outH = IMath.minNonZero(s.scaled.height, s.resultCrop.height)
            let diffW = Double(s.target.width) / Double(outW)
            let diffH = Double(s.target.height) / Double(outH)
            if diffH > diffW {
                s.extendAspectRatio = Size(
                    width: outW, height: IMath.scale(outW, Double(s.target.height) / Double(s.target.width)))
            } else if diffW > diffH {
                s.extendAspectRatio = Size(
                    width: IMath.scale(outH, Double(s.target.width) / Double(s.target.height)), height: outH)
            }
        }
        return s
    }
}
