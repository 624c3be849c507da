internal import CXML
import Core
import Foundation

/// An SVG made safe to draw (SPEC: Source formats): parsed by libxml2 with the network
/// off and no entity or DTD loaded, then only the allowlisted elements and attributes kept,
/// and every reference that leaves the document dropped. The bytes handed to librsvg are
/// the serialised result, never the source's.
public struct SanitisedSVG: Sendable {
    /// The document as UTF-8 XML.
    public var bytes: [UInt8]
    /// What was dropped, one line each (`element script`, `attribute onload on svg`, …),
    /// for the log.
    public var dropped: [String]
    /// The elements kept.
    public var elements: Int
}

public enum SVGSanitiser {
    /// libxml2's names for the SVG and XLink namespaces.
    static let svgNamespace = "http://www.w3.org/2000/svg"
    static let xlinkNamespace = "http://www.w3.org/1999/xlink"
    static let xmlNamespace = "http://www.w3.org/XML/1998/namespace"

    /// Sanitises `bytes`. `maxElements` bounds the elements of the source document (413
    /// past it); `rasterTypes` are the `image/…` types a `data:` URI of an `<image>` may
    /// have. Not XML, a DTD that declares entities, or a root that is not `<svg>`: 415.
    public static func sanitise(_ bytes: [UInt8], maxElements: Int, rasterTypes: Set<String>)
        throws(AspectError) -> SanitisedSVG
    {
        // Refused before libxml2 reads a declaration: an entity bomb is never expanded.
        if contains(bytes, "<!ENTITY") {
            throw AspectError(.unsupportedSource, "the SVG declares entities, which this service does not accept")
        }
        guard let doc = bytes.withUnsafeBytes({ cxml_parse($0.baseAddress, $0.count) }) else {
            throw AspectError(.unsupportedSource, "the SVG is not well-formed XML")
        }
        defer { cxml_free_doc(doc) }
        if cxml_declares_entities(doc) != 0 {
            throw AspectError(.unsupportedSource, "the SVG declares entities, which this service does not accept")
        }
        guard let root = cxml_root(doc), localName(root) == "svg", inSVG(root) else {
            throw AspectError(.unsupportedSource, "the document is not an SVG: its root element is not <svg>")
        }
        var walk = Walk(rasterTypes: rasterTypes)
        // The whole document's elements are counted before anything is dropped.
        let count = countElements(root, limit: maxElements)
        guard count <= maxElements else {
            throw AspectError(
                .sourceTooLarge, "the SVG has more than \(maxElements) elements, over limits.maxSvgElements")
        }
        // The prologue: the DTD (never loaded; dropped), comments, processing instructions
        // (`<?xml-stylesheet?>` would load a style sheet).
        var top = cxml_doc_first_child(doc)
        while let node = top {
            top = cxml_next(node)
            if node != root {
                walk.dropped.append(describe(node))
                cxml_remove(node)
            }
        }
        walk.clean(root)
        IntrinsicSize.settle(root)
        var text: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard cxml_serialise(doc, &text, &length) == 0, let text else {
            throw AspectError(.internalError, "the SVG could not be written out after sanitising")
        }
        defer { cxml_free(text) }
        let out = text.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
            Array(UnsafeBufferPointer(start: $0, count: Int(length)))
        }
        return SanitisedSVG(bytes: out, dropped: walk.dropped, elements: count - walk.elementsDropped)
    }

    /// Elements under and including `node`, counted up to one past `limit`.
    static func countElements(_ node: OpaquePointer, limit: Int) -> Int {
        var count = 0
        var stack: [OpaquePointer] = [node]
        while let n = stack.popLast(), count <= limit {
            if cxml_type(n) == Int32(CXML_ELEMENT) { count += 1 }
            var child = cxml_first_child(n)
            while let c = child {
                stack.append(c)
                child = cxml_next(c)
            }
        }
        return count
    }

    /// Whether the bytes hold `needle` (ASCII) as they are.
    static func contains(_ bytes: [UInt8], _ needle: String) -> Bool {
        let n = Array(needle.utf8)
        guard bytes.count >= n.count, let first = n.first else { return false }
        var i = 0
        while i <= bytes.count - n.count {
            if bytes[i] == first && bytes[i..<(i + n.count)].elementsEqual(n) { return true }
            i += 1
        }
        return false
    }

    /// A string libxml2 owns, copied; nil stays nil.
    static func string(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }

    /// A string libxml2 allocated for us, copied and freed.
    static func taking(_ p: UnsafeMutablePointer<CChar>?) -> String? {
        guard let p else { return nil }
        defer { cxml_free(p) }
        return String(cString: p)
    }

    static func localName(_ node: OpaquePointer) -> String { String(cString: cxml_name(node)) }

    /// In the SVG namespace, or in none (an SVG written without `xmlns`).
    static func inSVG(_ node: OpaquePointer) -> Bool {
        guard let ns = string(cxml_namespace(node)) else { return true }
        return ns == svgNamespace
    }

    static func describe(_ node: OpaquePointer) -> String {
        switch Int(cxml_type(node)) {
        case CXML_ELEMENT: "element \(localName(node))"
        case CXML_DTD: "the DTD"
        case CXML_COMMENT: "a comment"
        case CXML_PROCESSING_INSTRUCTION: "processing instruction \(localName(node))"
        case CXML_ENTITY_REFERENCE: "entity reference \(localName(node))"
        default: "a node of type \(cxml_type(node))"
        }
    }
}

/// One pass over the tree, dropping what is not allowed.
struct Walk {
    let rasterTypes: Set<String>
    var dropped: [String] = []
    var elementsDropped = 0

    init(rasterTypes: Set<String>) {
        self.rasterTypes = rasterTypes
    }

    /// Cleans `root` and everything under it, without recursion (libxml2 bounds the depth,
    /// but the stack here need not depend on it).
    mutating func clean(_ root: OpaquePointer) {
        var stack: [OpaquePointer] = [root]
        while let element = stack.popLast() {
            cleanAttributes(element)
            var child = cxml_first_child(element)
            while let node = child {
                child = cxml_next(node)
                switch Int(cxml_type(node)) {
                case CXML_TEXT, CXML_CDATA:
                    continue
                case CXML_ELEMENT:
                    if keep(node) { stack.append(node) } else { drop(node) }
                default:
                    drop(node)
                }
            }
        }
    }

    mutating func drop(_ node: OpaquePointer) {
        if cxml_type(node) == Int32(CXML_ELEMENT) {
            elementsDropped += SVGSanitiser.countElements(node, limit: .max)
        }
        dropped.append(SVGSanitiser.describe(node))
        cxml_remove(node)
    }

    /// Whether an element stays (its attributes are cleaned later). `<a>` stays as `<g>`:
    /// its drawing is kept, its link is not.
    mutating func keep(_ element: OpaquePointer) -> Bool {
        guard SVGSanitiser.inSVG(element) else { return false }
        let name = SVGSanitiser.localName(element)
        switch name {
        case "a":
            cxml_set_name(element, "g")
            return true
        case "style":
            return styleSheetIsSafe(element)
        case "image":
            // Kept only with a raster `data:` URI of an allowed type.
            guard let href = href(of: element), isAllowedRaster(href) else { return false }
            return true
        case "use":
            guard let href = href(of: element), CSSReferences.isFragment(href) else { return false }
            return true
        default:
            return SVGAllowlist.elements.contains(name)
        }
    }

    /// The `href` or `xlink:href` of an element, the later SVG 2 spelling first.
    func href(of element: OpaquePointer) -> String? {
        var attribute = cxml_first_attribute(element)
        var found: String?
        while let a = attribute {
            attribute = cxml_next_attribute(a)
            guard SVGSanitiser.string(cxml_attribute_name(a)) == "href" else { continue }
            let ns = SVGSanitiser.string(cxml_attribute_namespace(a))
            guard ns == nil || ns == SVGSanitiser.xlinkNamespace else { continue }
            let value = value(of: a)
            if ns == nil { return value }
            found = value
        }
        return found
    }

    func value(of attribute: OpaquePointer) -> String {
        SVGSanitiser.taking(cxml_attribute_value(attribute)) ?? ""
    }

    func isAllowedRaster(_ href: String) -> Bool {
        let lower = href.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard lower.hasPrefix("data:"), let comma = lower.firstIndex(of: ",") else { return false }
        let header = lower[lower.index(lower.startIndex, offsetBy: 5)..<comma]
        let type = header.split(separator: ";", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return rasterTypes.contains(type)
    }

    mutating func cleanAttributes(_ element: OpaquePointer) {
        let elementName = SVGSanitiser.localName(element)
        var attribute = cxml_first_attribute(element)
        while let a = attribute {
            attribute = cxml_next_attribute(a)
            let name = SVGSanitiser.string(cxml_attribute_name(a)) ?? ""
            let ns = SVGSanitiser.string(cxml_attribute_namespace(a))
            let keep: Bool
            switch (ns, name) {
            case (nil, "href"), (SVGSanitiser.xlinkNamespace, "href"):
                let v = value(of: a)
                keep = CSSReferences.isFragment(v) || (elementName == "image" && isAllowedRaster(v))
            case (SVGSanitiser.xmlNamespace, "space"), (SVGSanitiser.xmlNamespace, "lang"):
                keep = true
            case (nil, "style"):
                let v = value(of: a)
                let (safe, removed) = CSSDeclarations.filter(v)
                if !removed.isEmpty {
                    dropped.append("\(removed.count) style declaration(s) on \(elementName)")
                    if safe.isEmpty {
                        keep = false
                        break
                    }
                    cxml_set(element, "style", safe)
                    continue
                }
                keep = true
            case (nil, _):
                keep = SVGAllowlist.attributes.contains(name) && CSSReferences.allLocal(value(of: a))
            default:
                keep = false
            }
            if !keep {
                let prefix = SVGSanitiser.string(cxml_attribute_prefix(a)).map { "\($0):" } ?? ""
                dropped.append("attribute \(prefix)\(name) on \(elementName)")
                cxml_remove_attribute(a)
            }
        }
    }

    /// A `<style>` sheet is kept whole or dropped whole: kept when it is CSS with no
    /// at-rule (`@import`, `@font-face`), no escape (which could spell `url` another way)
    /// and no `url()` but to an element of the document.
    func styleSheetIsSafe(_ element: OpaquePointer) -> Bool {
        var attribute = cxml_first_attribute(element)
        while let a = attribute {
            attribute = cxml_next_attribute(a)
            if SVGSanitiser.string(cxml_attribute_name(a)) == "type" {
                let type = value(of: a).trimmingCharacters(in: .whitespaces).lowercased()
                if !type.isEmpty && type != "text/css" { return false }
            }
        }
        guard let text = SVGSanitiser.taking(cxml_text(element)) else { return true }
        return CSSReferences.isSafeSheet(text)
    }
}

/// References in CSS text and in attribute values.
enum CSSReferences {
    /// `#id`: an element of the same document, and nothing else.
    static func isFragment(_ value: String) -> Bool {
        let v = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard v.hasPrefix("#"), v.count > 1 else { return false }
        return v.dropFirst().allSatisfy { $0.isLetter || $0.isNumber || "-_.:".contains($0) }
    }

    /// Every `url(…)` in `text` names a fragment of the document.
    static func allLocal(_ text: String) -> Bool {
        let lower = text.lowercased()
        var rest = lower[...]
        while let open = rest.range(of: "url(") {
            let after = rest[open.upperBound...]
            guard let close = after.firstIndex(of: ")") else { return false }
            var target = after[..<close].trimmingCharacters(in: .whitespacesAndNewlines)
            if let q = target.first, q == "\"" || q == "'" {
                guard target.count >= 2, target.last == q else { return false }
                target = String(target.dropFirst().dropLast())
            }
            guard isFragment(target) else { return false }
            rest = after[after.index(after: close)...]
        }
        return true
    }

    /// CSS that can reach nothing outside the document: no escapes, no at-rules, no image
    /// functions, and `url()` only to `#id`.
    static func isSafeSheet(_ css: String) -> Bool {
        let lower = css.lowercased()
        if lower.contains("\\") || lower.contains("@") { return false }
        for banned in ["image(", "image-set(", "expression(", "src("] where lower.contains(banned) { return false }
        return allLocal(lower)
    }
}

/// A `style` attribute, declaration by declaration.
enum CSSDeclarations {
    /// The declarations of `style` that are safe, joined again, and those removed.
    static func filter(_ style: String) -> (kept: String, removed: [String]) {
        var kept: [String] = []
        var removed: [String] = []
        for declaration in style.split(separator: ";") {
            let d = declaration.trimmingCharacters(in: .whitespacesAndNewlines)
            if d.isEmpty { continue }
            if CSSReferences.isSafeSheet(d) && !d.contains("{") && !d.contains("}") {
                kept.append(d)
            } else {
                removed.append(d)
            }
        }
        return (kept.joined(separator: ";"), removed)
    }
}
