import Core
import Foundation
import Imaging
import ImagingTestSupport
import Syscalls
import Testing

/// SVG and PDF sources (SPEC: Source formats): drawn at the scale the plan needs, so sharp
/// at any size and never held to the no-upscaling rule; their intrinsic sizes; `page` of a
/// PDF and of a multi-page TIFF; a page past the last is a 400 naming the count.
@Suite struct VectorAndPageTests {
    /// 200 × 100 units: red left half, blue right half, and a black line one unit thick
    /// across the middle (y = 49.5 … 50.5).
    static let logo = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 100">\
        <rect width="100" height="100" fill="#ff0000"/><rect x="100" width="100" height="100" fill="#0000ff"/>\
        <rect y="49.5" width="200" height="1" fill="#000000"/></svg>
        """

    /// The rows of column `x` that are neither the background's colour nor the line's:
    /// the blur of an edge. Drawn at scale, one row at most; upscaled pixels, several.
    static func blurredRows(_ img: RawImage, x: Int, background: [UInt8]) -> Int {
        (0..<img.height).filter {
            let p = Array(img.pixel(x, $0).prefix(3))
            return p != background && p != [0, 0, 0]
        }.count
    }

    @Test func anSVGIsDrawnAtTheScaleThePlanNeeds() throws {
        let fixtures = try Fixtures()
        let svg = try fixtures.write("logo.svg", Array(Self.logo.utf8))
        let info = try Thumbnailer(limits: ImagingLimits()).probe(path: svg)
        #expect(info.format == "svg" && info.size == Size(width: 200, height: 100) && info.hasAlpha)
        // Five times its own size, with upscale off (the default): no-upscaling does not
        // apply to a vector.
        let (img, rendered) = try thumb(svg, "w=1000&format=png")
        #expect(img.width == 1000 && img.height == 500 && rendered.plan.output == Size(width: 1000, height: 500))
        #expect(img.pixel(250, 100).prefix(3).elementsEqual([255, 0, 0]))
        #expect(img.pixel(750, 100).prefix(3).elementsEqual([0, 0, 255]))
        // The line is 5 pixels thick, with at most one blended row on each side.
        let black = (0..<img.height).filter { img.pixel(250, $0).prefix(3).elementsEqual([0, 0, 0]) }
        #expect((4...5).contains(black.count), "\(black)")
        #expect(Self.blurredRows(img, x: 250, background: [255, 0, 0]) <= 2)
        // A raster of the same drawing at 200 × 100, enlarged as much, blurs the edge over
        // several rows: what drawing at scale avoids.
        let raster = try fixtures.write(
            "logo.png", try ImageFile.encode(try ImageFile.decode(rendered.bytes), as: .png))
        let small = try thumb(raster, "w=200&format=png").1
        let enlarged = try ImageFile.decode(
            try thumb(try fixtures.write("small.png", small.bytes), "w=1000&upscale=1&format=png").1.bytes)
        #expect(Self.blurredRows(enlarged, x: 250, background: [255, 0, 0]) > 2)
    }

    /// `/info`'s facts: the intrinsic size and a preview of the drawing, upright.
    @Test func anSVGAndAPDFAreDescribed() throws {
        let fixtures = try Fixtures()
        let t = try Thumbnailer(limits: ImagingLimits())
        let svg = try t.describe(file: try openFile(try fixtures.write("logo.svg", Array(Self.logo.utf8))))
        #expect(svg.description.size == Size(width: 200, height: 100) && svg.description.format == "svg")
        #expect(svg.previewWidth == 100 && svg.previewHeight == 50)
        // Red on the left of the preview, blue on the right, opaque.
        let left = Array(svg.previewRGBA[(10 * 100 + 20) * 4..<(10 * 100 + 20) * 4 + 4])
        let right = Array(svg.previewRGBA[(10 * 100 + 80) * 4..<(10 * 100 + 80) * 4 + 4])
        #expect(left == [255, 0, 0, 255] && right == [0, 0, 255, 255], "\(left) \(right)")
        let pdf = try t.describe(file: try openFile(try fixtures.write("doc.pdf", ImageFile.pdf(pages: Self.document))))
        #expect(pdf.pages == 3 && pdf.description.size == Size(width: 400, height: 300) && !pdf.description.hasAlpha)
    }

    @Test func anSVGKeepsItsTransparency() throws {
        let fixtures = try Fixtures()
        let svg = try fixtures.write(
            "dot.svg",
            Array(
                ##"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><circle cx="20" cy="20" r="10" fill="#00ff00"/></svg>"##
                    .utf8))
        let (img, rendered) = try thumb(svg, "w=80")
        #expect(rendered.format == .png && img.bands == 4)
        #expect(img.pixel(2, 2)[3] == 0)
        #expect(img.pixel(40, 40).elementsEqual([0, 255, 0, 255]))
    }

    /// SPEC: `width`/`height`, else the `viewBox`'s, else 300 × 150.
    @Test(arguments: [
        (#"width="64" height="32""#, Size(width: 64, height: 32)),
        (#"viewBox="0 0 90 30""#, Size(width: 90, height: 30)),
        (#"width="100%" viewBox="0 0 90 30""#, Size(width: 90, height: 30)),
        ("", Size(width: 300, height: 150)),
    ])
    func anSVGsIntrinsicSize(_ attributes: String, _ size: Size) throws {
        let fixtures = try Fixtures()
        let svg = try fixtures.write(
            "s.svg",
            Array(#"<svg xmlns="http://www.w3.org/2000/svg" \#(attributes)><rect width="5" height="5"/></svg>"#.utf8))
        #expect(try Thumbnailer(limits: ImagingLimits()).probe(path: svg).size == size)
        let (img, _) = try thumb(svg, "format=png")
        #expect(img.width == size.width && img.height == size.height)
    }

    static let document: [ImageFile.Page] = [
        ImageFile.Page(width: 400, height: 300, rgb: (255, 0, 0)),
        ImageFile.Page(width: 200, height: 400, rgb: (0, 0, 255), band: (255, 255, 0)),
        ImageFile.Page(width: 300, height: 300, rgb: (0, 255, 0)),
    ]

    @Test func aPDFPageIsChosenByPageAndSizedInPoints() throws {
        let fixtures = try Fixtures()
        let pdf = try fixtures.write("doc.pdf", ImageFile.pdf(pages: Self.document))
        let t = try Thumbnailer(limits: ImagingLimits())
        let first = try t.probe(path: pdf)
        #expect(first.format == "pdf" && first.pages == 3 && first.size == Size(width: 400, height: 300))
        // Opaque: drawn on white paper, so `auto` chooses as for a photograph.
        #expect(!first.hasAlpha)
        #expect(try t.probe(path: pdf, page: 2).size == Size(width: 200, height: 400))
        for (page, colour) in [(1, [255, 0, 0]), (2, [0, 0, 255]), (3, [0, 255, 0])] as [(Int, [UInt8])] {
            let (img, rendered) = try thumb(pdf, "w=100&page=\(page)")
            #expect(rendered.format == .jpeg && img.width == 100)
            let p = img.pixel(img.width / 2, img.height / 10).prefix(3)
            #expect(zip(p, colour).allSatisfy { abs(Int($0) - Int($1)) <= 3 }, "page \(page): \(Array(p))")
        }
    }

    @Test func aPDFPageIsDrawnSharpAtAnySize() throws {
        let fixtures = try Fixtures()
        let pdf = try fixtures.write("doc.pdf", ImageFile.pdf(pages: Self.document))
        // Page 2 is 200 × 400 points; 1200 wide is six times that, upscale off.
        let (img, rendered) = try thumb(pdf, "w=1200&page=2&format=png")
        #expect(img.width == 1200 && img.height == 2400 && img.bands == 3)
        #expect(rendered.plan.output == Size(width: 1200, height: 2400))
        // The band's edges (y = 133 and 266 points, from the bottom) stay one row wide.
        let x = 600
        let blended = (0..<img.height).filter {
            let p = Array(img.pixel(x, $0).prefix(3))
            return p != [0, 0, 255] && p != [255, 255, 0]
        }
        #expect(blended.count <= 4, "\(blended)")
    }

    @Test func aPagePastTheLastIs400NamingTheCount() throws {
        let fixtures = try Fixtures()
        let pdf = try fixtures.write("doc.pdf", ImageFile.pdf(pages: Self.document))
        let jpeg = try fixtures.write(
            "photo.jpg", try ImageFile.encode(Fixtures.quadrants(width: 40, height: 40), as: .jpeg))
        for (path, count) in [(pdf, "3 pages"), (jpeg, "1 page")] {
            #expect {
                _ = try thumb(path, "w=50&page=4")
            } throws: { error in
                guard let e = error as? ImagingError else { return false }
                return e.error.code == .badParam && e.error.message.contains("the source has \(count)")
            }
        }
        let t = try Thumbnailer(limits: ImagingLimits())
        #expect(throws: ImagingError.self) { try t.describe(file: try openFile(pdf), reading: SourceReading(page: 9)) }
        #expect(
            try t.describe(file: try openFile(pdf), reading: SourceReading(page: 3)).description.size
                == Size(width: 300, height: 300))
    }

    /// A PDF whose page box is 20000 points square (400 million pixels at its own size) is
    /// held by `limits.maxSourcePixels` at the size it is drawn: a small thumbnail of it is
    /// made, a drawing over the limit is a 413, and the header is not refused for its box.
    @Test func aHugePageBoxIsHeldAtTheSizeItIsDrawn() throws {
        let fixtures = try Fixtures()
        let pdf = try fixtures.write(
            "poster.pdf", ImageFile.pdf(pages: [ImageFile.Page(width: 20_000, height: 20_000, rgb: (0, 128, 0))]))
        var limits = ImagingLimits()
        limits.maxSourcePixels = 1_000_000
        #expect(try Thumbnailer(limits: limits).probe(path: pdf).size == Size(width: 20_000, height: 20_000))
        let (img, _) = try thumb(pdf, "w=100", limits: limits)
        #expect(img.width == 100 && img.height == 100)
        for query in ["w=2000", "w=2000&crop=0,0,0.5,0.5"] {
            #expect {
                _ = try thumb(pdf, query, limits: limits)
            } throws: { error in
                guard let e = error as? ImagingError else { return false }
                return e.error.code == .sourceTooLarge && e.error.message.contains("drawing this pdf at")
            }
        }
    }

    @Test func aMultiPageTIFFTakesPage() throws {
        let fixtures = try Fixtures()
        let one = RawImage(width: 60, height: 40, filledWith: Fixtures.red)
        let two = RawImage(width: 60, height: 40, filledWith: Fixtures.green)
        let stack = RawImage(width: 60, height: 80, bands: 3, pixels: one.pixels + two.pixels)
        let tiff = try fixtures.write("scan.tif", ImageFile.encode(stack, as: .tiff, pageHeight: 40))
        let (img, _) = try thumb(tiff, "w=30&page=2&format=png")
        #expect(img.width == 30 && img.pixel(15, 10).prefix(3).elementsEqual(Fixtures.green))
        let (first, _) = try thumb(tiff, "w=30&format=png")
        #expect(first.pixel(15, 10).prefix(3).elementsEqual(Fixtures.red))
    }

    /// Sanitised before it is drawn: a script and an outside reference are gone, the
    /// drawing stays.
    @Test func aHostileSVGIsDrawnWithoutWhatWasDropped() throws {
        let fixtures = try Fixtures()
        let svg = try fixtures.write(
            "x.svg",
            Array(
                """
                <svg xmlns="http://www.w3.org/2000/svg" width="20" height="20" onload="alert(1)">\
                <script>alert(2)</script><rect width="20" height="20" fill="#0000ff"/>\
                <image href="file:///etc/hostname" width="20" height="20"/></svg>
                """.utf8))
        let (img, _) = try thumb(svg, "format=png")
        #expect(img.pixel(10, 10).elementsEqual([0, 0, 255, 255]))
    }

    @Test func anSVGOverTheElementLimitIs413() throws {
        let fixtures = try Fixtures()
        let svg = try fixtures.write(
            "many.svg",
            Array(
                (#"<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9">"#
                    + String(repeating: "<rect/>", count: 600) + "</svg>").utf8))
        var limits = ImagingLimits()
        limits.maxSvgElements = 500
        #expect {
            _ = try thumb(svg, "w=5&format=png", limits: limits)
        } throws: { error in
            (error as? ImagingError)?.error.code == .sourceTooLarge
        }
        #expect(try thumb(svg, "w=5&format=png").0.width == 5)
    }
}

func openFile(_ path: String) throws -> OpenFile {
    try OpenFile.open(path).get()
}
