internal import CXML
import Foundation

/// An XMP packet read with libxml2 (this target is libxml2's one owner): the Dublin Core
/// fields a result keeps under `output.keepCopyright`.
public enum XMP {
    /// Dublin Core's namespace.
    public static let dublinCore = "http://purl.org/dc/elements/1.1/"

    /// The texts of `dc:rights` and `dc:creator` (each `rdf:li`, else the element's own text).
    public static func dublinCoreRights(_ xmp: [UInt8]) -> (rights: [String], creators: [String]) {
        guard let doc = xmp.withUnsafeBytes({ cxml_parse($0.baseAddress, $0.count) }) else { return ([], []) }
        defer { cxml_free_doc(doc) }
        var rights: [String] = []
        var creators: [String] = []
        var stack: [OpaquePointer] = cxml_root(doc).map { [$0] } ?? []
        while let node = stack.popLast() {
            var child = cxml_first_child(node)
            while let c = child {
                if cxml_type(c) == Int32(CXML_ELEMENT) { stack.append(c) }
                child = cxml_next(c)
            }
            guard let ns = cxml_namespace(node), String(cString: ns) == dublinCore else { continue }
            let name = String(cString: cxml_name(node))
            guard name == "rights" || name == "creator" else { continue }
            let texts = items(node)
            if name == "rights" { rights += texts } else { creators += texts }
        }
        return (rights, creators)
    }

    /// The texts of the `li` elements under `node`, else its own text.
    static func items(_ node: OpaquePointer) -> [String] {
        var texts: [String] = []
        var stack = [node]
        while let n = stack.popLast() {
            var child = cxml_first_child(n)
            while let c = child {
                if cxml_type(c) == Int32(CXML_ELEMENT) {
                    if String(cString: cxml_name(c)) == "li" { texts.append(text(c)) } else { stack.append(c) }
                }
                child = cxml_next(c)
            }
        }
        let own = text(node).trimmingCharacters(in: .whitespacesAndNewlines)
        return texts.isEmpty ? (own.isEmpty ? [] : [own]) : texts
    }

    static func text(_ node: OpaquePointer) -> String {
        guard let t = cxml_text(node) else { return "" }
        defer { cxml_free(t) }
        return String(cString: t)
    }
}
