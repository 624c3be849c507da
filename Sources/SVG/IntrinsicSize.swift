internal import CXML
import Foundation

/// An SVG's `W0 × H0` (SPEC: Source formats): its `width` and `height`, else its
/// `viewBox`'s, else 300 × 150. Written onto the root in pixels whenever the document
/// leaves a side to the renderer's judgment (missing, or a percentage), so that libvips and
/// librsvg draw the size the service planned on.
enum IntrinsicSize {
    static let fallback = (width: 300.0, height: 150.0)

    static func settle(_ root: OpaquePointer) {
        let width = length(attribute(root, "width"))
        let height = length(attribute(root, "height"))
        if width.isAbsolute && height.isAbsolute { return }
        let box = viewBox(attribute(root, "viewBox"))
        var w = width.pixels
        var h = height.pixels
        switch (w, h, box) {
        case (nil, nil, let box?):
            (w, h) = (box.width, box.height)
        case (let w0?, nil, let box?):
            h = w0 * box.height / box.width
        case (nil, let h0?, let box?):
            w = h0 * box.width / box.height
        default:
            break
        }
        // Only the sides the document left open are written.
        if !width.isAbsolute { cxml_set(root, "width", format(w ?? fallback.width)) }
        if !height.isAbsolute { cxml_set(root, "height", format(h ?? fallback.height)) }
    }

    static func attribute(_ node: OpaquePointer, _ name: String) -> String? {
        SVGSanitiser.taking(cxml_get(node, name))
    }

    struct Length {
        /// In pixels when it is a bare number or `px`; nil when missing or a percentage.
        var pixels: Double?
        /// Given in any absolute unit (the renderer converts `pt`, `in`, `cm`, `mm`, `pc`).
        var isAbsolute: Bool
    }

    static func length(_ text: String?) -> Length {
        guard let t = text?.trimmingCharacters(in: .whitespaces), !t.isEmpty, !t.hasSuffix("%") else {
            return Length(pixels: nil, isAbsolute: false)
        }
        let number = t.hasSuffix("px") ? String(t.dropLast(2)) : t
        if let v = Double(number), v.isFinite, v > 0 { return Length(pixels: v, isAbsolute: true) }
        let units = ["pt", "pc", "in", "cm", "mm"]
        if let unit = units.first(where: { t.hasSuffix($0) }), let v = Double(t.dropLast(unit.count)), v.isFinite,
            v > 0
        {
            return Length(pixels: nil, isAbsolute: true)
        }
        // em, ex and anything unreadable: as if missing.
        return Length(pixels: nil, isAbsolute: false)
    }

    static func viewBox(_ text: String?) -> (width: Double, height: Double)? {
        guard let text else { return nil }
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\n" }).compactMap {
            Double($0)
        }
        guard parts.count == 4, parts[2].isFinite, parts[3].isFinite, parts[2] > 0, parts[3] > 0 else { return nil }
        return (parts[2], parts[3])
    }

    static func format(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e9 ? String(Int(v)) : String(v)
    }
}
