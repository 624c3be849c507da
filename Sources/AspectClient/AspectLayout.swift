import Foundation

/// The frame to reserve for an image and the thumbnail to ask for, before any pixel
/// arrives: what a SwiftUI view needs from a container size, the screen's scale and the
/// image's ratio (from `/info`, or known). Pure: no view, no network.
///
/// Sizes asked of the server are rounded up to a multiple of `step` points, so a list
/// whose rows differ by a point or two shares a handful of cached variants, not hundreds;
/// the view scales the few extra pixels down.
public struct AspectLayout: Sendable, Equatable {
    /// How the image meets its frame: the mission's cases.
    public enum Kind: Sendable, Equatable {
        /// The whole image, as large as fits the container, in its own ratio.
        case fit
        /// A frame of `ratio` (width / height) as wide as the container, the image
        /// cropped to it (SwiftUI's `.aspectRatio(ratio, contentMode: .fill)` + clip).
        case fill(ratio: Double)
        /// A square as large as fits, the image cropped to it.
        case square
        /// A circle as large as fits (an avatar), the image cropped and clipped.
        case circle
        /// A capsule of `ratio` as wide as the container, the image cropped and clipped.
        case capsule(ratio: Double)
        /// The container's width; the height follows the image's ratio.
        case widthFillsParent
    }

    /// The frame to reserve, in points.
    public let width: Double
    public let height: Double
    /// What to ask the server for.
    public let thumbnail: Thumbnail

    /// The layout of `src` of ratio `imageRatio` (width / height of the upright image) in
    /// a container of `container` points, on a screen of `scale` pixels a point.
    public init(
        src: String, imageRatio: Double, kind: Kind, container: (width: Double, height: Double), scale: Double,
        step: Int = 50
    ) {
        let r = imageRatio > 0 && imageRatio.isFinite ? imageRatio : 1
        let cw = max(1, container.width)
        // A height of 0 or infinity (a scroll view) leaves the width to decide.
        let ch = container.height > 0 && container.height.isFinite ? container.height : .infinity
        var t = Thumbnail(src: src)
        let frame: (Double, Double)
        switch kind {
        case .fit:
            frame = cw / ch > r ? (ch * r, ch) : (cw, cw / r)
            t = t.width(Self.bucket(frame.0, step)).mode(.fit)
        case .widthFillsParent:
            frame = (cw, cw / r)
            t = t.width(Self.bucket(frame.0, step))
        case .fill(let box), .capsule(let box):
            let b = box > 0 && box.isFinite ? box : 1
            frame = cw / ch > b ? (ch * b, ch) : (cw, cw / b)
            t = t.width(Self.bucket(frame.0, step)).ratio(b).mode(.fill)
            if case .capsule = kind { t = t.shape(.capsule) }
        case .square, .circle:
            let side = min(cw, ch)
            frame = (side, side)
            t = t.width(Self.bucket(side, step)).ratio(1).mode(.fill)
            if kind == .circle { t = t.shape(.circle) }
        }
        width = frame.0
        height = frame.1
        thumbnail = scale > 1 ? t.dpr(Self.density(scale)) : t
    }

    /// Points rounded up to a multiple of `step` (at least one step).
    static func bucket(_ points: Double, _ step: Int) -> Int {
        let s = max(1, step)
        return max(s, Int((points / Double(s)).rounded(.up)) * s)
    }

    /// The screen's scale as the server is asked for it: 1, 2 or 3 (what devices have),
    /// rounded up so the image is never softer than the screen.
    static func density(_ scale: Double) -> Double { min(3, max(1, scale.rounded(.up))) }

    /// width / height of the frame a kind reserves for an image of `imageRatio`, whatever
    /// the container: what a view sets with `.aspectRatio(_:contentMode: .fit)`.
    public static func frameRatio(_ kind: Kind, imageRatio: Double) -> Double {
        switch kind {
        case .fit, .widthFillsParent: imageRatio > 0 && imageRatio.isFinite ? imageRatio : 1
        case .fill(let r), .capsule(let r): r > 0 && r.isFinite ? r : 1
        case .square, .circle: 1
        }
    }
}
