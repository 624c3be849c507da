import Core

/// What a thumbor URL asks of the picture's geometry, kept as thumbor reads it (SPEC:
/// thumbor URLs): its sizes depend on the source, so the plan (`ThumborGeometry+Plan`) is
/// made once the source's header is read, in thumbor 7.8's order and rounding.
public struct ThumborGeometry: Equatable, Sendable {
    /// A point thumbor crops around: from `focal()` or `extract_focal()`, in the source's
    /// pixels (before any crop), weighted by the area it came from.
    public struct FocalPoint: Equatable, Sendable {
        public var x: Int
        public var y: Int
        public var weight: Double

        public init(x: Int, y: Int, weight: Double) {
            (self.x, self.y, self.weight) = (x, y, weight)
        }

        /// thumbor's `FocalPoint.from_square`: the centre of the rectangle, its area as weight.
        public init(square c: ThumborPath.Crop) {
            let (w, h) = (c.right - c.left, c.bottom - c.top)
            self.init(x: c.left + w / 2, y: c.top + h / 2, weight: Double(w * h))
        }
    }

    /// What `fill(…)` puts around the picture.
    public enum Fill: Equatable, Sendable {
        case color(Color)
        /// The picture itself, stretched over the canvas and blurred.
        case blur
        /// The picture's mean colour.
        case auto
    }

    /// A filter that changes the geometry after the resize, in the URL's order.
    public enum Step: Equatable, Sendable {
        /// `rotate(N)`: counter-clockwise, a multiple of 90.
        case rotate(Int)
        case fill(Fill)
        case proportion(Double)
        case upscale
    }

    /// `watermark(name,x,y,alpha[,w_ratio[,h_ratio]])` with a configured watermark's name.
    public struct Mark: Equatable, Sendable {
        public enum Position: Equatable, Sendable {
            /// From the left or top; a negative one from the right or bottom.
            case pixels(Int)
            /// Percent of the room left, from the left or top (negative: from the right or bottom).
            case percent(Double)
            case center
        }

        public var name: String
        public var x: Position
        public var y: Position
        /// thumbor's alpha: 0 opaque … 100 invisible.
        public var alpha: Int
        /// Percent of the picture the mark may take on each side; nil: its own size.
        public var widthRatio: Double?
        public var heightRatio: Double?

        public init(
            name: String, x: Position, y: Position, alpha: Int, widthRatio: Double? = nil, heightRatio: Double? = nil
        ) {
            (self.name, self.x, self.y, self.alpha) = (name, x, y, alpha)
            (self.widthRatio, self.heightRatio) = (widthRatio, heightRatio)
        }
    }

    public var crop: ThumborPath.Crop?
    public var fitIn: ThumborPath.FitIn?
    public var width: ThumborPath.Side = .free
    public var height: ThumborPath.Side = .free
    public var flipHorizontally = false
    public var flipVertically = false
    public var halign: ThumborPath.HAlign = .center
    public var valign: ThumborPath.VAlign = .middle
    /// `smart`: the crop follows the faces found (else libvips' attention), where thumbor
    /// asks its configured detectors.
    public var smart = false
    public var focalPoints: [FocalPoint] = []
    public var noUpscale = false
    public var steps: [Step] = []
    /// `round_corner(a|b,r,g,b[,transparent])`: the corners' radius and their colour
    /// (nil: transparent).
    public var cornerRadius: Int?
    public var cornerColor: Color?
    public var watermark: Mark?
    /// `background_color(c)`: the result flattened onto it.
    public var backgroundColor: Color?
    /// `fill(c,1)`: the picture laid over the fill's colour, its transparent pixels filled
    /// too (thumbor's `fill_transparent`; with `blur` or `auto` it changes nothing, as the
    /// canvas is drawn from the picture's own pixels).
    public var fillTransparent = false

    public init() {}

    /// One spelling of every field, for the canonical form.
    public var text: String {
        func side(_ s: ThumborPath.Side) -> String {
            switch s {
            case .free: "0"
            case .orig: "orig"
            case .pixels(let n): "\(n)"
            }
        }
        var parts: [String] = []
        if let c = crop { parts.append("crop:\(c.left):\(c.top):\(c.right):\(c.bottom)") }
        parts.append(
            "\(fitIn?.rawValue ?? "crop"):\(flipHorizontally ? "-" : "")\(side(width))x\(flipVertically ? "-" : "")\(side(height))"
        )
        parts.append("align:\(halign.rawValue):\(valign.rawValue)")
        if smart { parts.append("smart") }
        for p in focalPoints { parts.append("focal:\(p.x):\(p.y):\(decimalString(p.weight))") }
        if noUpscale { parts.append("no_upscale") }
        for s in steps {
            switch s {
            case .rotate(let n): parts.append("rotate:\(n)")
            case .fill(.color(let c)): parts.append("fill:\(c.description)")
            case .fill(.blur): parts.append("fill:blur")
            case .fill(.auto): parts.append("fill:auto")
            case .proportion(let v): parts.append("proportion:\(decimalString(v))")
            case .upscale: parts.append("upscale")
            }
        }
        if fillTransparent { parts.append("fill_transparent") }
        if let c = backgroundColor { parts.append("bg:\(c.description)") }
        if let r = cornerRadius { parts.append("round:\(r):\(cornerColor?.description ?? "none")") }
        if let m = watermark {
            func pos(_ p: Mark.Position) -> String {
                switch p {
                case .pixels(let n): "\(n)"
                case .percent(let v): "\(decimalString(v))p"
                case .center: "center"
                }
            }
            parts.append(
                "wm:\(m.name):\(pos(m.x)):\(pos(m.y)):\(m.alpha):\(m.widthRatio.map(decimalString) ?? "none"):\(m.heightRatio.map(decimalString) ?? "none")"
            )
        }
        return parts.joined(separator: "/")
    }
}
