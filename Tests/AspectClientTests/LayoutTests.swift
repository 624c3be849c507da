import AspectClient
import Foundation
import Testing

/// The layout a SwiftUI view reserves and asks for, for the mission's cases.
@Suite struct LayoutTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let kind: AspectLayout.Kind
        let container: (Double, Double)
        let imageRatio: Double
        let scale: Double
        let frame: (Double, Double)
        let query: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "fill 4:3 in a 375-point-wide column (iPhone, @3x)", kind: .fill(ratio: 4.0 / 3),
            container: (375, .infinity), imageRatio: 1.5, scale: 3, frame: (375, 281.25),
            query: "dpr=3&mode=fill&ratio=1.3333333333333333&src=a.jpg&w=400"),
        Case(
            name: "width fills the parent, the height follows a portrait image", kind: .widthFillsParent,
            container: (320, 0), imageRatio: 0.75, scale: 2, frame: (320, 320 / 0.75), query: "dpr=2&src=a.jpg&w=350"),
        Case(
            name: "fit a landscape image in a 300×300 box", kind: .fit, container: (300, 300), imageRatio: 2,
            scale: 1, frame: (300, 150), query: "mode=fit&src=a.jpg&w=300"),
        Case(
            name: "fit a portrait image in a wide box: the height limits", kind: .fit, container: (400, 200),
            imageRatio: 0.5, scale: 2, frame: (100, 200), query: "dpr=2&mode=fit&src=a.jpg&w=100"),
        Case(
            name: "square in a 180×240 cell", kind: .square, container: (180, 240), imageRatio: 1.5, scale: 2,
            frame: (180, 180), query: "dpr=2&mode=fill&ratio=1&src=a.jpg&w=200"),
        Case(
            name: "circle avatar, 44 points", kind: .circle, container: (44, 44), imageRatio: 0.8, scale: 3,
            frame: (44, 44), query: "dpr=3&mode=fill&ratio=1&shape=circle&src=a.jpg&w=50"),
        Case(
            name: "capsule 3:1 in a 240-point row", kind: .capsule(ratio: 3), container: (240, 300), imageRatio: 1,
            scale: 2.5, frame: (240, 80), query: "dpr=3&mode=fill&ratio=3&shape=capsule&src=a.jpg&w=250"),
        Case(
            name: "fill 16:9 in a short container: the height limits", kind: .fill(ratio: 16.0 / 9),
            container: (800, 90), imageRatio: 1, scale: 1, frame: (160, 90),
            query: "mode=fill&ratio=1.7777777777777777&src=a.jpg&w=200"),
    ]

    @Test(arguments: cases)
    func frameAndRequest(_ c: Case) {
        let l = AspectLayout(
            src: "a.jpg", imageRatio: c.imageRatio, kind: c.kind, container: c.container, scale: c.scale)
        #expect(abs(l.width - c.frame.0) < 1e-9 && abs(l.height - c.frame.1) < 1e-9, "\(l.width)×\(l.height)")
        #expect(l.thumbnail.path() == "/thumb?" + c.query)
        // The frame keeps the ratio the kind promises.
        #expect(abs(l.width / l.height - AspectLayout.frameRatio(c.kind, imageRatio: c.imageRatio)) < 1e-9)
    }

    /// Widths from 301 to 350 points ask for one size: a list does not fan out into 50
    /// cache entries; the frame still follows the container exactly.
    @Test func widthsAreBucketed() {
        let asked = Set(
            (301...350).map {
                AspectLayout(
                    src: "a.jpg", imageRatio: 1.5, kind: .fill(ratio: 4.0 / 3), container: (Double($0), 1000), scale: 2
                ).thumbnail.parameters["w"]
            })
        #expect(asked == ["350"])
        let fine = AspectLayout(
            src: "a.jpg", imageRatio: 1.5, kind: .widthFillsParent, container: (333, 0), scale: 2, step: 1)
        #expect(fine.thumbnail.parameters["w"] == "333" && fine.width == 333)
    }
}
