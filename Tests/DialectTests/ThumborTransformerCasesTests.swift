import Core
import Testing
import Thumbor

/// thumbor's own transformer cases, from its repository's `tests/fixtures/transformer_test_data.py`
/// (`TESTITEMS` and `FIT_IN_CROP_DATA`, 100 cases): each source size, asked size,
/// alignment, focal points, manual crop and fit-in kind as the file gives them, and what
/// thumbor 7.8's own `Transformer` did with it, recorded by running it (its test engine
/// made to keep its size through crops and resizes as a real engine does, and to round a
/// free side as the real engine's `get_proportional_*` does): the part of the source it
/// kept (its crops composed) and the size it made. Aspect's plan of the same URL must
/// keep the same part and make the same size.
@Suite struct ThumborTransformerCasesTests {
    enum Side: Sendable, ExpressibleByIntegerLiteral, ExpressibleByStringLiteral {
        case pixels(Int)
        case orig
        init(integerLiteral n: Int) { self = .pixels(n) }
        init(stringLiteral _: String) { self = .orig }
        var side: ThumborPath.Side {
            switch self {
            case .orig: .orig
            case .pixels(let n): n == 0 ? .free : .pixels(n)
            }
        }
    }

    struct Case: Sendable, CustomStringConvertible {
        var source: Size
        var width: Side
        var height: Side
        var halign: String
        var valign: String
        var focal: [(Int, Int, Double)]
        var manual: (Int, Int, Int, Int)?
        var fit: ThumborPath.FitIn?
        var kept: (Int, Int, Int, Int)?
        var size: (Int, Int)

        init(
            _ w: Int, _ h: Int, _ tw: Side, _ th: Side, _ halign: String, _ valign: String,
            _ focal: [(Int, Int, Double)],
            manual: (Int, Int, Int, Int)?, fit: ThumborPath.FitIn?, kept: (Int, Int, Int, Int)?, size: (Int, Int)
        ) {
            source = Size(width: w, height: h)
            (width, height, self.halign, self.valign, self.focal) = (tw, th, halign, valign, focal)
            (self.manual, self.fit, self.kept, self.size) = (manual, fit, kept, size)
        }

        var description: String {
            "\(source) to \(width)x\(height) \(fit?.rawValue ?? "") \(halign) \(valign) \(focal) \(manual.map { "\($0)" } ?? "")"
        }
    }

    static let cases: [Case] = [
        .init(
            800, 600, 400, 150, "center", "middle", [], manual: (0, 75, 800, 375), fit: nil, kept: (0, 75, 800, 300),
            size: (400, 150)),
        .init(
            600, 800, 150, 400, "center", "middle", [], manual: (150, 0, 450, 800), fit: nil, kept: (150, 0, 300, 800),
            size: (150, 400)),
        .init(600, 800, 300, 400, "center", "middle", [], manual: nil, fit: nil, kept: nil, size: (300, 400)),
        .init(800, 600, 0, 0, "center", "middle", [], manual: nil, fit: nil, kept: nil, size: (800, 600)),
        .init(800, 600, 400, 0, "center", "middle", [], manual: nil, fit: nil, kept: nil, size: (400, 300)),
        .init(
            200, 140, 180, 100, "center", "middle", [], manual: (0, 3, 200, 114), fit: nil, kept: (0, 3, 200, 111),
            size: (180, 100)),
        .init(
            200, 200, 100, 100, "center", "middle", [(100, 100, 1.0)], manual: nil, fit: nil, kept: nil,
            size: (100, 100)),
        .init(
            400, 200, 100, 100, "center", "middle", [(100, 100, 1.0)], manual: (50, 0, 250, 200), fit: nil,
            kept: (50, 0, 200, 200), size: (100, 100)),
        .init(
            400, 200, 100, 200, "center", "middle", [(100, 50, 1.0), (300, 50, 1.0)], manual: (150, 0, 250, 200),
            fit: nil, kept: (150, 0, 100, 200), size: (100, 200)),
        .init(
            400, 200, 100, 200, "center", "middle", [(100, 150, 1.0), (300, 150, 1.0)], manual: (150, 0, 250, 200),
            fit: nil, kept: (150, 0, 100, 200), size: (100, 200)),
        .init(
            400, 200, 100, 200, "center", "middle", [(100, 50, 1.0), (100, 150, 1.0)], manual: (75, 0, 175, 200),
            fit: nil, kept: (75, 0, 100, 200), size: (100, 200)),
        .init(
            400, 200, 100, 200, "center", "middle", [(300, 50, 1.0), (300, 150, 1.0)], manual: (225, 0, 325, 200),
            fit: nil, kept: (225, 0, 100, 200), size: (100, 200)),
        .init(
            200, 400, 100, 200, "center", "middle", [(100, 50, 1.0), (300, 50, 1.0)], manual: nil, fit: nil, kept: nil,
            size: (100, 200)),
        .init(
            200, 400, 100, 200, "center", "middle", [(100, 150, 1.0), (300, 150, 1.0)], manual: nil, fit: nil,
            kept: nil, size: (100, 200)),
        .init(
            200, 400, 100, 200, "center", "middle", [(100, 50, 1.0), (100, 150, 1.0)], manual: nil, fit: nil, kept: nil,
            size: (100, 200)),
        .init(
            200, 400, 100, 200, "center", "middle", [(300, 50, 1.0), (300, 150, 1.0)], manual: nil, fit: nil, kept: nil,
            size: (100, 200)),
        .init(
            400, 200, 100, 100, "center", "middle", [(50, 100, 1.0), (50, 300, 1.0), (150, 100, 1.0), (150, 300, 1.0)],
            manual: (50, 0, 250, 200), fit: nil, kept: (50, 0, 200, 200), size: (100, 100)),
        .init(800, 600, 400, 300, "center", "bottom", [], manual: nil, fit: nil, kept: nil, size: (400, 300)),
        .init(
            700, 300, 150, 300, "center", "bottom", [], manual: (275, 0, 425, 300), fit: nil, kept: (275, 0, 150, 300),
            size: (150, 300)),
        .init(
            700, 300, 300, 150, "right", "bottom", [], manual: (100, 0, 700, 300), fit: nil, kept: (100, 0, 600, 300),
            size: (300, 150)),
        .init(
            700, 300, 300, 150, "left", "bottom", [], manual: (0, 0, 600, 300), fit: nil, kept: (0, 0, 600, 300),
            size: (300, 150)),
        .init(
            700, 300, 150, 300, "center", "bottom", [], manual: (275, 0, 425, 300), fit: nil, kept: (275, 0, 150, 300),
            size: (150, 300)),
        .init(
            700, 300, 150, 300, "left", "bottom", [], manual: (0, 0, 150, 300), fit: nil, kept: (0, 0, 150, 300),
            size: (150, 300)),
        .init(
            700, 300, 150, 300, "right", "bottom", [], manual: (550, 0, 700, 300), fit: nil, kept: (550, 0, 150, 300),
            size: (150, 300)),
        .init(
            300, 800, 200, 300, "center", "bottom", [], manual: (0, 251, 300, 701), fit: nil, kept: (0, 251, 300, 450),
            size: (200, 300)),
        .init(
            300, 800, 200, 300, "left", "bottom", [], manual: (0, 251, 300, 701), fit: nil, kept: (0, 251, 300, 450),
            size: (200, 300)),
        .init(
            300, 800, 200, 300, "right", "bottom", [], manual: (0, 251, 300, 701), fit: nil, kept: (0, 251, 300, 450),
            size: (200, 300)),
        .init(
            500, 600, 300, 250, "center", "bottom", [], manual: (0, 119, 500, 536), fit: nil, kept: (0, 119, 500, 417),
            size: (300, 250)),
        .init(
            500, 600, 300, 250, "left", "bottom", [], manual: (0, 119, 500, 536), fit: nil, kept: (0, 119, 500, 417),
            size: (300, 250)),
        .init(
            500, 600, 300, 250, "right", "bottom", [], manual: (0, 119, 500, 536), fit: nil, kept: (0, 119, 500, 417),
            size: (300, 250)),
        .init(600, 800, 300, 0, "right", "bottom", [], manual: nil, fit: nil, kept: nil, size: (300, 400)),
        .init(600, 800, 300, 0, "center", "bottom", [], manual: nil, fit: nil, kept: nil, size: (300, 400)),
        .init(600, 800, 300, 0, "left", "bottom", [], manual: nil, fit: nil, kept: nil, size: (300, 400)),
        .init(600, 800, 250, 0, "left", "bottom", [], manual: nil, fit: nil, kept: nil, size: (250, 333)),
        .init(600, 800, 250, 0, "right", "bottom", [], manual: nil, fit: nil, kept: nil, size: (250, 333)),
        .init(600, 800, 250, 0, "center", "bottom", [], manual: nil, fit: nil, kept: nil, size: (250, 333)),
        .init(600, 800, 0, 400, "right", "bottom", [], manual: nil, fit: nil, kept: nil, size: (300, 400)),
        .init(600, 800, 0, 400, "left", "bottom", [], manual: nil, fit: nil, kept: nil, size: (300, 400)),
        .init(600, 800, 0, 400, "center", "bottom", [], manual: nil, fit: nil, kept: nil, size: (300, 400)),
        .init(600, 800, 0, 350, "center", "bottom", [], manual: nil, fit: nil, kept: nil, size: (262, 350)),
        .init(600, 800, 0, 350, "left", "bottom", [], manual: nil, fit: nil, kept: nil, size: (262, 350)),
        .init(600, 800, 0, 350, "right", "bottom", [], manual: nil, fit: nil, kept: nil, size: (262, 350)),
        .init(
            800, 600, 400, 150, "center", "middle", [], manual: (0, 75, 800, 375), fit: nil, kept: (0, 75, 800, 300),
            size: (400, 150)),
        .init(800, 300, 400, 150, "center", "middle", [], manual: nil, fit: nil, kept: nil, size: (400, 150)),
        .init(800, 300, 400, 150, "right", "middle", [], manual: nil, fit: nil, kept: nil, size: (400, 150)),
        .init(800, 300, 400, 150, "left", "middle", [], manual: nil, fit: nil, kept: nil, size: (400, 150)),
        .init(
            700, 300, 300, 150, "center", "middle", [], manual: (50, 0, 650, 300), fit: nil, kept: (50, 0, 600, 300),
            size: (300, 150)),
        .init(
            700, 300, 300, 150, "left", "middle", [], manual: (0, 0, 600, 300), fit: nil, kept: (0, 0, 600, 300),
            size: (300, 150)),
        .init(
            700, 300, 300, 150, "right", "middle", [], manual: (100, 0, 700, 300), fit: nil, kept: (100, 0, 600, 300),
            size: (300, 150)),
        .init(
            700, 300, 150, 300, "center", "middle", [], manual: (275, 0, 425, 300), fit: nil, kept: (275, 0, 150, 300),
            size: (150, 300)),
        .init(
            700, 300, 150, 300, "left", "middle", [], manual: (0, 0, 150, 300), fit: nil, kept: (0, 0, 150, 300),
            size: (150, 300)),
        .init(
            700, 300, 150, 300, "right", "middle", [], manual: (550, 0, 700, 300), fit: nil, kept: (550, 0, 150, 300),
            size: (150, 300)),
        .init(
            350, 700, 200, 600, "left", "middle", [], manual: (0, 0, 234, 700), fit: nil, kept: (0, 0, 234, 700),
            size: (200, 600)),
        .init(
            350, 700, 200, 600, "center", "middle", [], manual: (58, 0, 292, 700), fit: nil, kept: (58, 0, 234, 700),
            size: (200, 600)),
        .init(
            350, 700, 200, 600, "right", "middle", [], manual: (116, 0, 350, 700), fit: nil, kept: (116, 0, 234, 700),
            size: (200, 600)),
        .init(
            500, 600, 300, 250, "left", "middle", [], manual: (0, 27, 500, 444), fit: nil, kept: (0, 27, 500, 417),
            size: (300, 250)),
        .init(
            500, 600, 300, 250, "center", "middle", [], manual: (0, 27, 500, 444), fit: nil, kept: (0, 27, 500, 417),
            size: (300, 250)),
        .init(
            500, 600, 300, 250, "right", "middle", [], manual: (0, 27, 500, 444), fit: nil, kept: (0, 27, 500, 417),
            size: (300, 250)),
        .init(1, 1, 0, 0, "left", "middle", [], manual: nil, fit: nil, kept: nil, size: (1, 1)),
        .init(1, 1, 0, 0, "center", "middle", [], manual: nil, fit: nil, kept: nil, size: (1, 1)),
        .init(1, 1, 0, 0, "right", "middle", [], manual: nil, fit: nil, kept: nil, size: (1, 1)),
        .init(200, 400, 0, 1, "left", "middle", [], manual: nil, fit: nil, kept: (0, 0, 0, 400), size: (1, 1)),
        .init(200, 200, 16, 16, "left", "middle", [], manual: nil, fit: nil, kept: nil, size: (16, 16)),
        .init(
            800, 600, 400, 150, "left", "top", [], manual: (0, 0, 800, 300), fit: nil, kept: (0, 0, 800, 300),
            size: (400, 150)),
        .init(
            800, 600, 400, 150, "center", "top", [], manual: (0, 0, 800, 300), fit: nil, kept: (0, 0, 800, 300),
            size: (400, 150)),
        .init(
            800, 600, 400, 150, "right", "top", [], manual: (0, 0, 800, 300), fit: nil, kept: (0, 0, 800, 300),
            size: (400, 150)),
        .init(
            600, 800, 150, 400, "left", "top", [], manual: (0, 0, 300, 800), fit: nil, kept: (0, 0, 300, 800),
            size: (150, 400)),
        .init(
            600, 800, 150, 400, "center", "top", [], manual: (150, 0, 450, 800), fit: nil, kept: (150, 0, 300, 800),
            size: (150, 400)),
        .init(
            600, 800, 150, 400, "right", "top", [], manual: (300, 0, 600, 800), fit: nil, kept: (300, 0, 300, 800),
            size: (150, 400)),
        .init(
            800, 60, 400, 15, "left", "top", [], manual: (0, 0, 800, 30), fit: nil, kept: (0, 0, 800, 30),
            size: (400, 15)),
        .init(
            800, 60, 400, 15, "center", "top", [], manual: (0, 0, 800, 30), fit: nil, kept: (0, 0, 800, 30),
            size: (400, 15)),
        .init(
            800, 60, 400, 15, "right", "top", [], manual: (0, 0, 800, 30), fit: nil, kept: (0, 0, 800, 30),
            size: (400, 15)),
        .init(
            60, 800, 15, 400, "left", "top", [], manual: (0, 0, 30, 800), fit: nil, kept: (0, 0, 30, 800),
            size: (15, 400)),
        .init(
            60, 800, 15, 400, "center", "top", [], manual: (15, 0, 45, 800), fit: nil, kept: (15, 0, 30, 800),
            size: (15, 400)),
        .init(
            60, 800, 15, 400, "right", "top", [], manual: (30, 0, 60, 800), fit: nil, kept: (30, 0, 30, 800),
            size: (15, 400)),
        .init(8, 6, 4, 2, "left", "top", [], manual: (0, 0, 8, 4), fit: nil, kept: (0, 0, 8, 4), size: (4, 2)),
        .init(8, 6, 4, 2, "center", "top", [], manual: (0, 0, 8, 4), fit: nil, kept: (0, 0, 8, 4), size: (4, 2)),
        .init(8, 6, 4, 2, "right", "top", [], manual: (0, 0, 8, 4), fit: nil, kept: (0, 0, 8, 4), size: (4, 2)),
        .init(6, 8, 2, 4, "left", "top", [], manual: (0, 0, 4, 8), fit: nil, kept: (0, 0, 4, 8), size: (2, 4)),
        .init(6, 8, 2, 4, "center", "top", [], manual: (1, 0, 5, 8), fit: nil, kept: (1, 0, 4, 8), size: (2, 4)),
        .init(6, 8, 2, 4, "right", "top", [], manual: (2, 0, 6, 8), fit: nil, kept: (2, 0, 4, 8), size: (2, 4)),
        .init(800, 600, 400, 300, "left", "top", [], manual: nil, fit: nil, kept: nil, size: (400, 300)),
        .init(800, 600, 400, 300, "center", "top", [], manual: nil, fit: nil, kept: nil, size: (400, 300)),
        .init(800, 600, 400, 300, "right", "top", [], manual: nil, fit: nil, kept: nil, size: (400, 300)),
        .init(800, 600, 800, 600, "left", "top", [], manual: nil, fit: nil, kept: nil, size: (800, 600)),
        .init(800, 600, 800, 600, "center", "top", [], manual: nil, fit: nil, kept: nil, size: (800, 600)),
        .init(800, 600, 800, 600, "right", "top", [], manual: nil, fit: nil, kept: nil, size: (800, 600)),
        .init(
            800, 400, 400, "orig", "center", "middle", [], manual: (200, 0, 600, 400), fit: nil,
            kept: (200, 0, 400, 400), size: (400, 400)),
        .init(
            800, 400, "orig", 100, "center", "middle", [], manual: (200, 0, 600, 400), fit: nil,
            kept: (200, 150, 400, 100), size: (400, 100)),
        .init(
            800, 400, "orig", "orig", "center", "middle", [], manual: (200, 0, 600, 400), fit: nil,
            kept: (200, 0, 400, 400), size: (400, 400)),
        .init(800, 400, 400, 100, "center", "middle", [], manual: nil, fit: .fitIn, kept: nil, size: (200, 100)),
        .init(1000, 250, 500, 200, "center", "middle", [], manual: nil, fit: .fitIn, kept: nil, size: (500, 125)),
        .init(200, 250, 500, 400, "center", "middle", [], manual: nil, fit: .fitIn, kept: nil, size: (200, 250)),
        .init(800, 400, 100, 400, "center", "middle", [], manual: nil, fit: .adaptive, kept: nil, size: (200, 100)),
        .init(800, 400, 400, 100, "center", "middle", [], manual: nil, fit: .full, kept: nil, size: (400, 200)),
        .init(200, 250, 500, 400, "center", "middle", [], manual: nil, fit: .full, kept: nil, size: (500, 625)),
        .init(800, 400, 100, 400, "center", "middle", [], manual: nil, fit: .adaptiveFull, kept: nil, size: (400, 200)),
        .init(500, 500, 250, "orig", "center", "middle", [], manual: nil, fit: .fitIn, kept: nil, size: (250, 250)),
        .init(500, 500, "orig", 250, "center", "middle", [], manual: nil, fit: .fitIn, kept: nil, size: (250, 250)),
        .init(500, 500, "orig", "orig", "center", "middle", [], manual: nil, fit: .fitIn, kept: nil, size: (500, 500)),
    ]

    /// Cases where thumbor places the crop itself, no manual crop given: every alignment on
    /// landscape and portrait sources, free sides, `orig`, and one to three weighted focal
    /// points (on corners and edges too), recorded from thumbor 7.8's own `Transformer` by
    /// Tests/Fixtures/record-thumbor-placement.py (each checked against its PIL engine on a
    /// blank picture). Python's rounding shows here: halves to even, a centre of mass
    /// floored, an alignment point truncated (issue 50: the table above hands thumbor's
    /// crop back in for 98 of its 100 rows).
    static let placements: [Case] = [
        .init(800, 400, 200, 200, "left", "top", [], manual: nil, fit: nil, kept: (0, 0, 400, 400), size: (200, 200)),
        .init(
            800, 400, 200, 200, "center", "top", [], manual: nil, fit: nil, kept: (200, 0, 400, 400), size: (200, 200)),
        .init(
            800, 400, 200, 200, "right", "top", [], manual: nil, fit: nil, kept: (400, 0, 400, 400), size: (200, 200)),
        .init(
            800, 400, 200, 200, "left", "middle", [], manual: nil, fit: nil, kept: (0, 0, 400, 400), size: (200, 200)),
        .init(
            800, 400, 200, 200, "center", "middle", [], manual: nil, fit: nil, kept: (200, 0, 400, 400),
            size: (200, 200)),
        .init(
            800, 400, 200, 200, "right", "middle", [], manual: nil, fit: nil, kept: (400, 0, 400, 400), size: (200, 200)
        ),
        .init(
            800, 400, 200, 200, "left", "bottom", [], manual: nil, fit: nil, kept: (0, 0, 400, 400), size: (200, 200)),
        .init(
            800, 400, 200, 200, "center", "bottom", [], manual: nil, fit: nil, kept: (200, 0, 400, 400),
            size: (200, 200)),
        .init(
            800, 400, 200, 200, "right", "bottom", [], manual: nil, fit: nil, kept: (400, 0, 400, 400), size: (200, 200)
        ),
        .init(800, 400, 300, 100, "left", "top", [], manual: nil, fit: nil, kept: (0, 0, 800, 267), size: (300, 100)),
        .init(
            800, 400, 300, 100, "center", "middle", [], manual: nil, fit: nil, kept: (0, 66, 800, 267), size: (300, 100)
        ),
        .init(
            800, 400, 300, 100, "right", "bottom", [], manual: nil, fit: nil, kept: (0, 133, 800, 267), size: (300, 100)
        ),
        .init(800, 400, 100, 300, "left", "top", [], manual: nil, fit: nil, kept: (0, 0, 134, 400), size: (100, 300)),
        .init(
            800, 400, 100, 300, "center", "middle", [], manual: nil, fit: nil, kept: (333, 0, 134, 400),
            size: (100, 300)),
        .init(
            800, 400, 100, 300, "right", "bottom", [], manual: nil, fit: nil, kept: (666, 0, 134, 400), size: (100, 300)
        ),
        .init(800, 400, 0, 150, "center", "middle", [], manual: nil, fit: nil, kept: nil, size: (300, 150)),
        .init(800, 400, 0, 150, "right", "bottom", [], manual: nil, fit: nil, kept: nil, size: (300, 150)),
        .init(800, 400, 150, 0, "center", "middle", [], manual: nil, fit: nil, kept: nil, size: (150, 75)),
        .init(
            800, 400, "orig", 100, "left", "top", [], manual: nil, fit: nil, kept: (0, 0, 800, 100), size: (800, 100)),
        .init(
            800, 400, "orig", 100, "center", "middle", [], manual: nil, fit: nil, kept: (0, 150, 800, 100),
            size: (800, 100)),
        .init(
            800, 400, "orig", 100, "right", "bottom", [], manual: nil, fit: nil, kept: (0, 300, 800, 100),
            size: (800, 100)),
        .init(400, 800, 200, 200, "left", "top", [], manual: nil, fit: nil, kept: (0, 0, 400, 400), size: (200, 200)),
        .init(400, 800, 200, 200, "center", "top", [], manual: nil, fit: nil, kept: (0, 0, 400, 400), size: (200, 200)),
        .init(400, 800, 200, 200, "right", "top", [], manual: nil, fit: nil, kept: (0, 0, 400, 400), size: (200, 200)),
        .init(
            400, 800, 200, 200, "left", "middle", [], manual: nil, fit: nil, kept: (0, 200, 400, 400), size: (200, 200)),
        .init(
            400, 800, 200, 200, "center", "middle", [], manual: nil, fit: nil, kept: (0, 200, 400, 400),
            size: (200, 200)),
        .init(
            400, 800, 200, 200, "right", "middle", [], manual: nil, fit: nil, kept: (0, 200, 400, 400), size: (200, 200)
        ),
        .init(
            400, 800, 200, 200, "left", "bottom", [], manual: nil, fit: nil, kept: (0, 400, 400, 400), size: (200, 200)),
        .init(
            400, 800, 200, 200, "center", "bottom", [], manual: nil, fit: nil, kept: (0, 400, 400, 400),
            size: (200, 200)),
        .init(
            400, 800, 200, 200, "right", "bottom", [], manual: nil, fit: nil, kept: (0, 400, 400, 400), size: (200, 200)
        ),
        .init(400, 800, 300, 100, "left", "top", [], manual: nil, fit: nil, kept: (0, 0, 400, 133), size: (300, 100)),
        .init(
            400, 800, 300, 100, "center", "middle", [], manual: nil, fit: nil, kept: (0, 334, 400, 133),
            size: (300, 100)),
        .init(
            400, 800, 300, 100, "right", "bottom", [], manual: nil, fit: nil, kept: (0, 667, 400, 133), size: (300, 100)
        ),
        .init(400, 800, 100, 300, "left", "top", [], manual: nil, fit: nil, kept: (0, 0, 267, 800), size: (100, 300)),
        .init(
            400, 800, 100, 300, "center", "middle", [], manual: nil, fit: nil, kept: (66, 0, 267, 800), size: (100, 300)
        ),
        .init(
            400, 800, 100, 300, "right", "bottom", [], manual: nil, fit: nil, kept: (133, 0, 267, 800), size: (100, 300)
        ),
        .init(400, 800, 0, 150, "center", "middle", [], manual: nil, fit: nil, kept: nil, size: (75, 150)),
        .init(400, 800, 150, 0, "center", "middle", [], manual: nil, fit: nil, kept: nil, size: (150, 300)),
        .init(1000, 250, 200, 200, "left", "top", [], manual: nil, fit: nil, kept: (0, 0, 250, 250), size: (200, 200)),
        .init(
            1000, 250, 200, 200, "center", "middle", [], manual: nil, fit: nil, kept: (375, 0, 250, 250),
            size: (200, 200)),
        .init(
            1000, 250, 200, 200, "right", "bottom", [], manual: nil, fit: nil, kept: (750, 0, 250, 250),
            size: (200, 200)),
        .init(1000, 250, 300, 100, "left", "top", [], manual: nil, fit: nil, kept: (0, 0, 750, 250), size: (300, 100)),
        .init(
            1000, 250, 300, 100, "center", "middle", [], manual: nil, fit: nil, kept: (125, 0, 750, 250),
            size: (300, 100)),
        .init(
            1000, 250, 300, 100, "right", "bottom", [], manual: nil, fit: nil, kept: (250, 0, 750, 250),
            size: (300, 100)),
        .init(1000, 250, 100, 300, "left", "top", [], manual: nil, fit: nil, kept: (0, 0, 84, 250), size: (100, 300)),
        .init(
            1000, 250, 100, 300, "center", "middle", [], manual: nil, fit: nil, kept: (458, 0, 84, 250),
            size: (100, 300)),
        .init(
            1000, 250, 100, 300, "right", "bottom", [], manual: nil, fit: nil, kept: (916, 0, 84, 250), size: (100, 300)
        ),
        .init(1000, 250, 0, 150, "center", "middle", [], manual: nil, fit: nil, kept: nil, size: (600, 150)),
        .init(1000, 250, 150, 0, "left", "top", [], manual: nil, fit: nil, kept: (0, 0, 987, 250), size: (150, 38)),
        .init(
            1000, 250, 150, 0, "center", "middle", [], manual: nil, fit: nil, kept: (6, 0, 987, 250), size: (150, 38)),
        .init(
            1000, 250, 150, 0, "right", "bottom", [], manual: nil, fit: nil, kept: (13, 0, 987, 250), size: (150, 38)),
        .init(333, 777, 200, 200, "left", "top", [], manual: nil, fit: nil, kept: (0, 0, 333, 333), size: (200, 200)),
        .init(
            333, 777, 200, 200, "center", "middle", [], manual: nil, fit: nil, kept: (0, 222, 333, 333),
            size: (200, 200)),
        .init(
            333, 777, 200, 200, "right", "bottom", [], manual: nil, fit: nil, kept: (0, 444, 333, 333), size: (200, 200)
        ),
        .init(333, 777, 300, 100, "left", "top", [], manual: nil, fit: nil, kept: (0, 0, 333, 111), size: (300, 100)),
        .init(
            333, 777, 300, 100, "center", "middle", [], manual: nil, fit: nil, kept: (0, 332, 333, 111),
            size: (300, 100)),
        .init(
            333, 777, 300, 100, "right", "bottom", [], manual: nil, fit: nil, kept: (0, 666, 333, 111), size: (300, 100)
        ),
        .init(333, 777, 100, 300, "left", "top", [], manual: nil, fit: nil, kept: (0, 0, 259, 777), size: (100, 300)),
        .init(
            333, 777, 100, 300, "center", "middle", [], manual: nil, fit: nil, kept: (36, 0, 259, 777), size: (100, 300)
        ),
        .init(
            333, 777, 100, 300, "right", "bottom", [], manual: nil, fit: nil, kept: (74, 0, 259, 777), size: (100, 300)),
        .init(333, 777, 0, 150, "center", "middle", [], manual: nil, fit: nil, kept: nil, size: (64, 150)),
        .init(333, 777, 150, 0, "center", "middle", [], manual: nil, fit: nil, kept: nil, size: (150, 350)),
        .init(
            333, 777, "orig", 100, "left", "top", [], manual: nil, fit: nil, kept: (0, 0, 333, 100), size: (333, 100)),
        .init(
            333, 777, "orig", 100, "center", "middle", [], manual: nil, fit: nil, kept: (0, 338, 333, 100),
            size: (333, 100)),
        .init(
            333, 777, "orig", 100, "right", "bottom", [], manual: nil, fit: nil, kept: (0, 677, 333, 100),
            size: (333, 100)),
        .init(
            1920, 1280, 200, 200, "left", "top", [], manual: nil, fit: nil, kept: (0, 0, 1280, 1280), size: (200, 200)),
        .init(
            1920, 1280, 200, 200, "center", "middle", [], manual: nil, fit: nil, kept: (320, 0, 1280, 1280),
            size: (200, 200)),
        .init(
            1920, 1280, 200, 200, "right", "bottom", [], manual: nil, fit: nil, kept: (640, 0, 1280, 1280),
            size: (200, 200)),
        .init(
            1920, 1280, 300, 100, "left", "top", [], manual: nil, fit: nil, kept: (0, 0, 1920, 640), size: (300, 100)),
        .init(
            1920, 1280, 300, 100, "center", "middle", [], manual: nil, fit: nil, kept: (0, 320, 1920, 640),
            size: (300, 100)),
        .init(
            1920, 1280, 300, 100, "right", "bottom", [], manual: nil, fit: nil, kept: (0, 640, 1920, 640),
            size: (300, 100)),
        .init(
            1920, 1280, 100, 300, "left", "top", [], manual: nil, fit: nil, kept: (0, 0, 427, 1280), size: (100, 300)),
        .init(
            1920, 1280, 100, 300, "center", "middle", [], manual: nil, fit: nil, kept: (746, 0, 427, 1280),
            size: (100, 300)),
        .init(
            1920, 1280, 100, 300, "right", "bottom", [], manual: nil, fit: nil, kept: (1493, 0, 427, 1280),
            size: (100, 300)),
        .init(1920, 1280, 0, 150, "center", "middle", [], manual: nil, fit: nil, kept: nil, size: (225, 150)),
        .init(1920, 1280, 150, 0, "center", "middle", [], manual: nil, fit: nil, kept: nil, size: (150, 100)),
        .init(
            1920, 1280, "orig", 100, "left", "top", [], manual: nil, fit: nil, kept: (0, 0, 1920, 100),
            size: (1920, 100)),
        .init(
            1920, 1280, "orig", 100, "center", "middle", [], manual: nil, fit: nil, kept: (0, 590, 1920, 100),
            size: (1920, 100)),
        .init(
            1920, 1280, "orig", 100, "right", "bottom", [], manual: nil, fit: nil, kept: (0, 1180, 1920, 100),
            size: (1920, 100)),
        .init(1920, 1280, 302, 201, "left", "top", [], manual: nil, fit: nil, kept: nil, size: (302, 201)),
        .init(1920, 1280, 299, 200, "left", "top", [], manual: nil, fit: nil, kept: nil, size: (299, 200)),
        .init(333, 777, 100, 233, "left", "top", [], manual: nil, fit: nil, kept: nil, size: (100, 233)),
        .init(
            800, 400, 200, 200, "right", "bottom", [(700, 200, 1.0)], manual: nil, fit: nil, kept: (400, 0, 400, 400),
            size: (200, 200)),
        .init(
            800, 400, 200, 200, "center", "middle", [(150, 100, 1.0)], manual: nil, fit: nil, kept: (0, 0, 400, 400),
            size: (200, 200)),
        .init(
            800, 400, 200, 200, "left", "top", [(500, 390, 1.0)], manual: nil, fit: nil, kept: (300, 0, 400, 400),
            size: (200, 200)),
        .init(
            800, 400, 200, 200, "right", "bottom", [(0, 0, 1.0)], manual: nil, fit: nil, kept: (0, 0, 400, 400),
            size: (200, 200)),
        .init(
            800, 400, 200, 200, "center", "middle", [(800, 400, 1.0)], manual: nil, fit: nil, kept: (400, 0, 400, 400),
            size: (200, 200)),
        .init(
            800, 400, 200, 200, "left", "top", [(100, 100, 1.0), (700, 300, 3.0)], manual: nil, fit: nil,
            kept: (350, 0, 400, 400), size: (200, 200)),
        .init(
            800, 400, 200, 200, "right", "bottom", [(100, 200, 0.25), (700, 200, 0.75)], manual: nil, fit: nil,
            kept: (350, 0, 400, 400), size: (200, 200)),
        .init(
            800, 400, 200, 200, "center", "middle", [(301, 10, 1.0), (302, 390, 1.0)], manual: nil, fit: nil,
            kept: (101, 0, 400, 400), size: (200, 200)),
        .init(800, 400, 400, 200, "left", "top", [(700, 50, 1.0)], manual: nil, fit: nil, kept: nil, size: (400, 200)),
        .init(
            800, 400, "orig", 100, "right", "bottom", [(400, 390, 1.0)], manual: nil, fit: nil,
            kept: (0, 300, 800, 100), size: (800, 100)),
        .init(
            800, 400, "orig", 100, "center", "middle", [(10, 120, 2.0), (790, 20, 1.0)], manual: nil, fit: nil,
            kept: (0, 36, 800, 100), size: (800, 100)),
        .init(
            400, 800, 200, 200, "left", "top", [(200, 780, 1.0)], manual: nil, fit: nil, kept: (0, 400, 400, 400),
            size: (200, 200)),
        .init(
            400, 800, 200, 200, "right", "bottom", [(20, 250, 1.0), (380, 450, 1.0), (200, 300, 2.0)], manual: nil,
            fit: nil, kept: (0, 125, 400, 400), size: (200, 200)),
        .init(
            400, 800, 100, 300, "center", "middle", [(390, 400, 1.0)], manual: nil, fit: nil, kept: (133, 0, 267, 800),
            size: (100, 300)),
        .init(
            400, 800, 100, 300, "left", "top", [(180, 400, 1.0)], manual: nil, fit: nil, kept: (46, 0, 267, 800),
            size: (100, 300)),
        .init(
            400, 800, 100, 300, "right", "bottom", [(181, 400, 1.0)], manual: nil, fit: nil, kept: (48, 0, 267, 800),
            size: (100, 300)),
        .init(
            1000, 250, 300, 100, "center", "middle", [(50, 125, 1.0)], manual: nil, fit: nil, kept: (0, 0, 750, 250),
            size: (300, 100)),
        .init(
            1000, 250, 300, 100, "left", "top", [(900, 10, 2.0), (600, 240, 1.0)], manual: nil, fit: nil,
            kept: (250, 0, 750, 250), size: (300, 100)),
        .init(
            1000, 250, 300, 100, "right", "bottom", [(100, 0, 1.0), (500, 250, 1.0), (700, 125, 2.0)], manual: nil,
            fit: nil, kept: (125, 0, 750, 250), size: (300, 100)),
        .init(
            1000, 250, 200, 200, "center", "middle", [(990, 5, 1.0)], manual: nil, fit: nil, kept: (750, 0, 250, 250),
            size: (200, 200)),
        .init(
            333, 777, 200, 200, "left", "top", [(166, 389, 1.0)], manual: nil, fit: nil, kept: (0, 222, 333, 333),
            size: (200, 200)),
        .init(
            333, 777, 200, 200, "right", "bottom", [(166, 390, 1.0)], manual: nil, fit: nil, kept: (0, 224, 333, 333),
            size: (200, 200)),
        .init(
            333, 777, 200, 200, "center", "middle", [(10, 100, 1.0), (300, 700, 2.0), (166, 389, 0.5)], manual: nil,
            fit: nil, kept: (0, 318, 333, 333), size: (200, 200)),
        .init(
            333, 777, 300, 100, "left", "top", [(5, 770, 1.0)], manual: nil, fit: nil, kept: (0, 666, 333, 111),
            size: (300, 100)),
        .init(
            1920, 1280, 300, 100, "right", "bottom", [(960, 50, 1.0)], manual: nil, fit: nil, kept: (0, 0, 1920, 640),
            size: (300, 100)),
        .init(
            1920, 1280, 300, 100, "center", "middle", [(200, 1000, 1.0), (1800, 1250, 1.0)], manual: nil, fit: nil,
            kept: (0, 640, 1920, 640), size: (300, 100)),
        .init(
            1920, 1280, 100, 300, "left", "top", [(1000, 640, 1.0)], manual: nil, fit: nil, kept: (786, 0, 427, 1280),
            size: (100, 300)),
        .init(
            1920, 1280, 100, 300, "right", "bottom", [(1001, 640, 1.0)], manual: nil, fit: nil,
            kept: (788, 0, 427, 1280), size: (100, 300)),
        .init(
            1920, 1280, 100, 300, "center", "middle", [(1900, 10, 1.0), (1700, 1270, 1.0), (40, 640, 1.0)], manual: nil,
            fit: nil, kept: (1000, 0, 427, 1280), size: (100, 300)),
    ]

    static let limits = RequestLimits(maxDimension: 100_000, maxDpr: 8)

    @Test(arguments: cases + placements)
    func keepsAndMakesWhatThumborDoes(_ c: Case) throws {
        var g = ThumborGeometry()
        (g.width, g.height) = (c.width.side, c.height.side)
        g.fitIn = c.fit
        g.halign = try #require(ThumborPath.HAlign(rawValue: c.halign))
        g.valign = try #require(ThumborPath.VAlign(rawValue: c.valign))
        g.focalPoints = c.focal.map { ThumborGeometry.FocalPoint(x: $0.0, y: $0.1, weight: $0.2) }
        g.crop = c.manual.map { ThumborPath.Crop(left: $0.0, top: $0.1, right: $0.2, bottom: $0.3) }
        let plan = try g.plan(
            source: ThumborSource(size: c.source), request: ThumbRequest(src: "a.jpg"), limits: Self.limits)
        #expect(plan.output == Size(width: c.size.0, height: c.size.1))
        let whole = Rect(x: 0, y: 0, width: c.source.width, height: c.source.height)
        // thumbor crops one case (200×400 to 0x1: a width of round(0.5) = 0) to nothing
        // wide; an image has at least a pixel, and the resize makes 1×1 of either.
        let kept = c.kept.map { Rect(x: $0.0, y: $0.1, width: max(1, $0.2), height: max(1, $0.3)) } ?? whole
        #expect((plan.region ?? whole) == kept)
    }
}
