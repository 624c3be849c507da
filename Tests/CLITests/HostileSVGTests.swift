import Foundation
import Glibc
import Synchronization
import TestSupport
import Testing

/// The service never opens a file or a connection because of an SVG's content (SPEC:
/// Source formats). Each SVG here points outside the document in one of the places the
/// grammar allows, at a canary and at a loopback listener, and goes through the server as
/// `/thumb` and `/info`. The canary is a FIFO: opening it for reading is seen by a watcher
/// that keeps trying to open it for writing (which succeeds only while a reader has it
/// open), and a read would block the renderer until the deadline. The listener counts every
/// connection it accepts. Both detectors are shown to work at the end.
@Suite struct HostileSVGTests {
    /// Sees any reader of a FIFO: open(O_WRONLY | O_NONBLOCK) fails with ENXIO unless one
    /// has it open.
    final class FIFOWatcher: Sendable {
        let path: String
        let readers = Atomic<Int>(0)
        let running = Atomic<Bool>(true)

        init(_ path: String) throws {
            guard mkfifo(path, 0o644) == 0 else { throw TestError("mkfifo failed") }
            self.path = path
            Thread { [self] in
                while running.load(ordering: .relaxed) {
                    let fd = open(path, O_WRONLY | O_NONBLOCK)
                    if fd >= 0 {
                        readers.add(1, ordering: .relaxed)
                        close(fd)
                    }
                    usleep(200)
                }
            }.start()
        }

        func stop() { running.store(false, ordering: .relaxed) }
    }

    static func documents(canary: String, net: String) -> [(name: String, svg: String, status: Int)] {
        let svg =
            ##"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" "##
            + ##"xmlns:xi="http://www.w3.org/2001/XInclude" width="40" height="20">"##
        let file = "file://\(canary)"
        let body = ##"<rect width="40" height="20" fill="#0000ff"/>"##
        func doc(_ inner: String, prologue: String = "") -> String { prologue + svg + body + inner + "</svg>" }
        let bomb =
            ##"<!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">"##
            + ##"<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">"##
            + ##"<!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">]>"##
        return [
            ("image-file", doc(##"<image href="\##(file)" width="9" height="9"/>"##), 200),
            ("image-net", doc(##"<image xlink:href="\##(net)i.png" width="9" height="9"/>"##), 200),
            ("fill-file", doc(##"<rect width="9" height="9" fill="url(\##(file)#g)"/>"##), 200),
            ("fill-net", doc(##"<rect width="9" height="9" fill="url('\##(net)p.svg#g')"/>"##), 200),
            (
                "style-attr",
                doc(##"<rect width="9" height="9" style="fill:url(\##(net)p.svg#g);mask:url(\##(file))"/>"##), 200
            ),
            ("style-import", doc(##"<style>@import url(\##(net)a.css);</style>"##), 200),
            ("style-import-file", doc(##"<style>@import "\##(file)";</style>"##), 200),
            (
                "style-url",
                doc(##"<style>rect { fill: url(\##(net)g.svg#g) } circle { fill: url(\##(file)) }</style>"##), 200
            ),
            ("style-font", doc(##"<style>@font-face { font-family: x; src: url(\##(net)f.ttf) }</style>"##), 200),
            (
                "feimage",
                doc(##"<filter id="f"><feImage href="\##(file)"/><feImage xlink:href="\##(net)"/></filter>"##), 200
            ),
            ("use-file", doc(##"<use href="\##(file)#x"/><use xlink:href="\##(net)u.svg#x"/>"##), 200),
            (
                "gradient-href",
                doc(##"<linearGradient id="g" xlink:href="\##(net)g.svg#h"/><pattern id="p" href="\##(file)"/>"##), 200
            ),
            ("textpath", doc(##"<text><textPath href="\##(net)t.svg#p">x</textPath></text>"##), 200),
            ("link", doc(##"<a href="\##(net)"><circle r="3"/></a>"##), 200),
            (
                "script",
                doc(##"<script href="\##(net)s.js"/><script>fetch('\##(net)')</script>"##).replacingOccurrences(
                    of: "<svg ", with: ##"<svg onload="fetch('\##(net)')" "##), 200
            ),
            (
                "foreign",
                doc(##"<foreignObject><iframe xmlns="http://www.w3.org/1999/xhtml" src="\##(net)"/></foreignObject>"##),
                200
            ),
            ("xinclude", doc(##"<xi:include href="\##(file)" parse="text"/>"##), 200),
            ("stylesheet-pi", doc("", prologue: ##"<?xml-stylesheet href="\##(net)a.css" type="text/css"?>"##), 200),
            ("external-dtd", doc("", prologue: ##"<!DOCTYPE svg SYSTEM "\##(net)svg.dtd">"##), 200),
            ("xxe", doc("<text>&x;</text>", prologue: ##"<!DOCTYPE svg [<!ENTITY x SYSTEM "\##(file)">]>"##), 415),
            ("xxe-net", doc("", prologue: ##"<!DOCTYPE svg [<!ENTITY % p SYSTEM "\##(net)p.dtd"> %p;]>"##), 415),
            ("bomb", doc("<text>&f;&f;&f;&f;&f;&f;&f;&f;</text>", prologue: bomb), 415),
            ("many", doc(String(repeating: ##"<rect width="1" height="1"/>"##, count: 20_000)), 413),
        ]
    }

    @Test func hostileSVGsReadNoFileAndConnectNowhere() throws {
        let listener = try TestOrigin()
        defer { listener.stop() }
        let dir = try ServeProcess.sampleFolder("hostile-svg")
        let canary = dir.appendingPathComponent("canary").path
        let watcher = try FIFOWatcher(canary)
        defer { watcher.stop() }
        let documents = Self.documents(canary: canary, net: listener.base)
        for d in documents {
            try Data(d.svg.utf8).write(to: dir.appendingPathComponent("images/\(d.name).svg"))
        }
        let s = try ServeProcess(samples: dir)
        for d in documents {
            for route in ["thumb", "info"] {
                let started = Date()
                let r = try ServiceTests.get(s.port, "/\(route)?src=\(d.name).svg&w=64&format=png")
                let seconds = Date().timeIntervalSince(started)
                #expect(r.status == d.status, "\(route) \(d.name): \(r.status) \(r.text.prefix(200))")
                // Nothing is fetched or waited on, so each answer is quick (3 s leaves room
                // for a loaded machine; the processing timeout is 10 s).
                #expect(seconds < 3, "\(route) \(d.name) took \(seconds) s")
                if route == "thumb", r.status == 200 {
                    // What was allowed is drawn: the blue rectangle.
                    #expect(r.headers["content-type"] == "image/png")
                }
            }
        }
        // librsvg, given no base URL, loads nothing outside a document by itself either; the
        // log shows that the sanitiser, not only librsvg, kept these out: each SVG drawn
        // was sanitised, with what was dropped named.
        s.signal(SIGTERM)
        #expect(s.wait(seconds: 15) == 0)
        let log = s.errors
        // (The log holds back a line repeated within seconds, so each is looked for once.)
        for dropped in [
            "element image", "attribute fill on rect", "style declaration(s) on rect", "element style",
            "element feImage", "element use", "attribute xlink:href on linearGradient", "attribute href on pattern",
            "attribute href on textPath", "attribute href on g", "element script", "attribute onload on svg",
            "element foreignObject", "element include", "the DTD", "processing instruction xml-stylesheet",
        ] {
            #expect(log.contains(dropped), "\(dropped) not in the log")
        }
        #expect(watcher.readers.load(ordering: .relaxed) == 0, "the canary was opened")
        #expect(listener.connections == 0, "the listener saw \(listener.log)")
        // The detectors work: a reader of the FIFO and a connection are both seen.
        let reader = open(canary, O_RDONLY | O_NONBLOCK)
        defer { close(reader) }
        let deadline = Date().addingTimeInterval(5)
        while watcher.readers.load(ordering: .relaxed) == 0, Date() < deadline { usleep(1000) }
        #expect(watcher.readers.load(ordering: .relaxed) > 0)
        _ = try? ServiceTests.get(listener.port, "/files/none")
        #expect(listener.connections == 1)
    }
}
