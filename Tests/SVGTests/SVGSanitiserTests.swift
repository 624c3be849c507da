import Core
import Foundation
import SVG
import Testing

/// The sanitiser on its own (SPEC: Source formats, SVG): what is kept, what is dropped,
/// what is refused, and the intrinsic size written onto the root. That nothing is opened
/// or connected to while a hostile SVG is drawn is shown through the server, in
/// `Tests/CLITests` (HostileSVGTests).
@Suite struct SVGSanitiserTests {
    static let raster: Set<String> = ["image/png", "image/jpeg", "image/gif", "image/webp"]

    static func clean(_ svg: String, maxElements: Int = 10_000) throws -> (text: String, dropped: [String]) {
        let result = try SVGSanitiser.sanitise(Array(svg.utf8), maxElements: maxElements, rasterTypes: raster)
        return (String(decoding: result.bytes, as: UTF8.self), result.dropped)
    }

    static func refusal(_ svg: String, maxElements: Int = 10_000) -> AspectError? {
        do {
            _ = try SVGSanitiser.sanitise(Array(svg.utf8), maxElements: maxElements, rasterTypes: raster)
            return nil
        } catch {
            return error
        }
    }

    static let open =
        #"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" "#
        + #"width="100" height="50">"#

    @Test func shapesGradientsTextAndLocalReferencesAreKept() throws {
        let svg =
            Self.open + """
                <defs><linearGradient id="g"><stop offset="0" stop-color="red"/><stop offset="1" stop-color="blue"/>\
                </linearGradient><clipPath id="c"><circle cx="25" cy="25" r="20"/></clipPath>\
                <filter id="f"><feGaussianBlur stdDeviation="2"/></filter></defs>\
                <rect width="100" height="50" fill="url(#g)" clip-path="url('#c')" filter="url(#f)"/>\
                <path d="M0 0L10 10" stroke="#000" style="stroke-width:2;opacity:0.5"/>\
                <use xlink:href="#c"/><use href="#c"/><text x="1" y="40" font-family="sans-serif">Hi</text></svg>
                """
        let (text, dropped) = try Self.clean(svg)
        #expect(dropped.isEmpty, "\(dropped)")
        for kept in [
            "linearGradient", "clipPath", "feGaussianBlur", ##"fill="url(#g)""##, ##"xlink:href="#c""##,
            ##"href="#c""##,
            "stroke-width:2", ">Hi</text>",
        ] {
            #expect(text.contains(kept), "\(kept) missing from \(text)")
        }
    }

    @Test func scriptsEventsForeignObjectsAndFeImageAreDropped() throws {
        let svg =
            Self.open + """
                <script>alert(1)</script><rect width="10" height="10" onclick="alert(1)" onload="x()"/>\
                <foreignObject width="10" height="10"><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>\
                <filter id="f"><feImage href="file:///etc/passwd"/></filter><a href="javascript:alert(1)"><circle r="3"/></a>\
                <animate attributeName="x" values="0;1"/><iframe src="http://127.0.0.1/"/></svg>
                """
        let (text, dropped) = try Self.clean(svg)
        for gone in [
            "script", "alert", "onclick", "onload", "foreignObject", "xhtml", "feImage", "passwd", "javascript",
            "animate", "iframe", "127.0.0.1",
        ] {
            #expect(!text.contains(gone), "\(gone) left in \(text)")
        }
        // The link's drawing stays, as a group.
        #expect(text.contains("<g><circle r=\"3\"/></g>"))
        #expect(dropped.contains("element script"))
        #expect(dropped.contains("attribute onclick on rect"))
    }

    @Test(arguments: [
        #"<image href="file:///etc/hostname" width="5" height="5"/>"#,
        #"<image xlink:href="http://127.0.0.1:9/x.png" width="5" height="5"/>"#,
        #"<image href="data:image/svg+xml;base64,PHN2Zy8+" width="5" height="5"/>"#,
        #"<image href="other.png"/>"#,
        #"<use href="other.svg#logo"/>"#,
        #"<use xlink:href="file:///etc/hostname#x"/>"#,
        #"<rect width="5" height="5" fill="url(http://127.0.0.1:9/p.svg#g)"/>"#,
        #"<rect width="5" height="5" style="fill:url(file:///etc/hostname)"/>"#,
        #"<rect width="5" height="5" style="fill:u\72l(http://127.0.0.1:9/)"/>"#,
        #"<style>@import url(http://127.0.0.1:9/a.css);</style>"#,
        #"<style>@import "file:///etc/hostname";</style>"#,
        #"<style>rect { fill: url(http://127.0.0.1:9/g.svg#g) }</style>"#,
        #"<style>rect { fill: u\72l(http://127.0.0.1:9/) }</style>"#,
        #"<style>@font-face { font-family: x; src: url(http://127.0.0.1:9/f.ttf) }</style>"#,
        #"<style>rect { background: image-set("http://127.0.0.1:9/a.png" 1x) }</style>"#,
        #"<pattern id="p"><image href="http://127.0.0.1:9/p.png"/></pattern>"#,
    ])
    func everyReferenceThatLeavesTheDocumentIsDropped(_ fragment: String) throws {
        let (text, dropped) = try Self.clean(Self.open + fragment + #"<circle r="4"/></svg>"#)
        for gone in ["127.0.0.1", "file:", "other.", "data:image/svg", #"\72"#] {
            #expect(!text.contains(gone), "\(gone) left in \(text)")
        }
        #expect(!dropped.isEmpty)
        // The rest is drawn.
        #expect(text.contains(#"<circle r="4"/>"#))
    }

    @Test func aRasterDataURIIsKeptAndLocalStyleSheetsToo() throws {
        let png = "data:image/png;base64,iVBORw0KGgo="
        let svg =
            Self.open + #"<image href="\#(png)" width="5" height="5"/>"#
            + #"<style>rect { fill: url(#g); stroke: blue }</style></svg>"#
        let (text, dropped) = try Self.clean(svg)
        #expect(dropped.isEmpty, "\(dropped)")
        #expect(text.contains(png))
        #expect(text.contains("stroke: blue"))
    }

    @Test func theDTDCommentsAndStyleSheetInstructionsAreDroppedAndNeverLoaded() throws {
        let svg = """
            <?xml version="1.0"?>
            <?xml-stylesheet href="http://127.0.0.1:9/a.css" type="text/css"?>
            <!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://127.0.0.1:9/svg11.dtd">
            <!-- exported by a drawing program -->
            """ + Self.open + #"<rect width="4" height="4"/></svg>"#
        let (text, dropped) = try Self.clean(svg)
        #expect(!text.contains("DOCTYPE") && !text.contains("stylesheet") && !text.contains("exported"))
        #expect(dropped.contains("the DTD"))
        #expect(text.contains("<rect"))
    }

    @Test(arguments: [
        // External entity (XXE).
        #"<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/hostname">]>"#
            + #"<svg xmlns="http://www.w3.org/2000/svg"><text>&x;</text></svg>"#,
        // Billion laughs.
        #"<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">"#
            + #"<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>"#
            + #"<svg xmlns="http://www.w3.org/2000/svg"><text>&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;</text></svg>"#,
        // A parameter entity from the network.
        #"<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY % p SYSTEM "http://127.0.0.1:9/p.dtd"> %p;]>"#
            + #"<svg xmlns="http://www.w3.org/2000/svg"/>"#,
    ])
    func entitiesAreRefused(_ svg: String) {
        let error = Self.refusal(svg)
        #expect(error?.code == .unsupportedSource)
        #expect(error?.message.contains("entities") == true)
    }

    @Test func notXMLAndNotSVGAreRefused() {
        #expect(Self.refusal("<svg xmlns='http://www.w3.org/2000/svg'><rect></svg>")?.code == .unsupportedSource)
        #expect(Self.refusal(#"<html xmlns="http://www.w3.org/1999/xhtml"/>"#)?.message.contains("<svg>") == true)
        #expect(Self.refusal(#"<svg xmlns="urn:other"/>"#)?.code == .unsupportedSource)
    }

    @Test func elementsPastTheLimitAre413() {
        let many = String(repeating: "<rect/>", count: 20_000)
        let svg = Self.open + many + "</svg>"
        let error = Self.refusal(svg)
        #expect(error?.code == .sourceTooLarge)
        #expect(error?.message.contains("limits.maxSvgElements") == true)
        #expect(Self.refusal(Self.open + String(repeating: "<rect/>", count: 99) + "</svg>", maxElements: 100) == nil)
    }

    @Test func nestingPastLibxml2sDepthLimitIsRefused() {
        let deep = String(repeating: "<g>", count: 5000) + String(repeating: "</g>", count: 5000)
        #expect(Self.refusal(Self.open + deep + "</svg>", maxElements: 100_000)?.code == .unsupportedSource)
    }

    /// SPEC: `width`/`height`, else the `viewBox`'s, else 300 × 150.
    @Test(arguments: [
        (#"width="40" height="30""#, "40", "30"),
        (#"viewBox="0 0 200 100""#, "200", "100"),
        (#"width="100%" height="100%" viewBox="0 0 64 48""#, "64", "48"),
        (#"width="128" viewBox="0 0 64 48""#, "128", "96"),
        (#"height="24" viewBox="0 0 64 48""#, "32", "24"),
        ("", "300", "150"),
        (#"width="2in" height="1in""#, "2in", "1in"),
    ])
    func theIntrinsicSizeIsWrittenOntoTheRoot(_ attributes: String, _ width: String, _ height: String) throws {
        let (text, _) = try Self.clean(#"<svg xmlns="http://www.w3.org/2000/svg" \#(attributes)><rect/></svg>"#)
        #expect(text.contains(#"width="\#(width)""#) && text.contains(#"height="\#(height)""#), "\(text)")
    }
}
