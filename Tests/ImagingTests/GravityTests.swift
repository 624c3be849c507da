import Core
import Imaging
import TestSupport
import Testing

/// Which region each gravity keeps and where pad places, by the colours of the output.
@Suite struct GravityTests {
    let fixtures: Fixtures
    let landscape: String  // 400×200: red | green over blue | yellow
    let portrait: String  // 200×400

    init() throws {
        fixtures = try Fixtures()
        landscape = try fixtures.write(
            "landscape.png", ImageFile.encode(Fixtures.quadrants(width: 400, height: 200), as: .png))
        portrait = try fixtures.write(
            "portrait.png", ImageFile.encode(Fixtures.quadrants(width: 200, height: 400), as: .png))
    }

    static let r = Fixtures.red, g = Fixtures.green, b = Fixtures.blue, y = Fixtures.yellow

    // A 100×100 fill of the 400×200 landscape scales it to 200×100 and keeps a 100-wide window.
    static let landscapeFill: [(String, [[UInt8]])] = [
        ("west", [r, r, b, b]), ("northwest", [r, r, b, b]), ("southwest", [r, r, b, b]),
        ("east", [g, g, y, y]), ("northeast", [g, g, y, y]), ("southeast", [g, g, y, y]),
        ("center", [r, g, b, y]), ("north", [r, g, b, y]), ("south", [r, g, b, y]),
        ("focus&fx=0&fy=0.5", [r, r, b, b]), ("focus&fx=1&fy=0.5", [g, g, y, y]),
        ("focus&fx=0.5&fy=0.5", [r, g, b, y]),
    ]

    @Test(arguments: landscapeFill)
    func fillKeepsTheNamedRegionOfALandscape(gravity: String, expected: [[UInt8]]) throws {
        let (img, rendered) = try thumb(landscape, "w=100&h=100&mode=fill&format=png&gravity=" + gravity)
        #expect(img.width == 100 && img.height == 100)
        #expect(rendered.plan.output == Size(width: 100, height: 100))
        #expect(quadrantCentres(img) == expected)
    }

    static let portraitFill: [(String, [[UInt8]])] = [
        ("north", [r, g, r, g]), ("northeast", [r, g, r, g]), ("south", [b, y, b, y]), ("southwest", [b, y, b, y]),
        ("center", [r, g, b, y]), ("east", [r, g, b, y]), ("focus&fy=0&fx=0.5", [r, g, r, g]),
        ("focus&fy=1&fx=0.5", [b, y, b, y]),
    ]

    @Test(arguments: portraitFill)
    func fillKeepsTheNamedRegionOfAPortrait(gravity: String, expected: [[UInt8]]) throws {
        let (img, _) = try thumb(portrait, "w=100&h=100&mode=fill&format=png&gravity=" + gravity)
        #expect(quadrantCentres(img) == expected)
    }

    @Test func entropyKeepsTheDetailedHalf() throws {
        // Left half flat grey, right half noise: entropy must keep the right.
        var g = 0x1234_5678 as UInt64
        var pixels: [UInt8] = []
        for _ in 0..<200 {
            for x in 0..<400 {
                if x < 200 {
                    pixels += [128, 128, 128]
                } else {
                    g = g &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    let v = UInt8(truncatingIfNeeded: g >> 56)
                    pixels += [v, v, v]
                }
            }
        }
        let path = try fixtures.write(
            "entropy.png", ImageFile.encode(RawImage(width: 400, height: 200, bands: 3, pixels: pixels), as: .png))
        let (img, _) = try thumb(path, "w=100&h=100&mode=fill&format=png&gravity=entropy")
        #expect(img.width == 100 && img.height == 100)
        let column = (0..<100).map { Int(img.pixel(10, $0)[0]) }
        let spread = (column.max() ?? 0) - (column.min() ?? 0)
        #expect(spread > 50, "the kept window is flat: entropy did not find the noise")
        let (smart, _) = try thumb(path, "w=100&h=100&mode=fill&format=png&gravity=smart")
        #expect(smart.width == 100 && smart.height == 100)
    }

    @Test func padPlacesTheImageAndPaintsTheBars() throws {
        let magenta: [UInt8] = [255, 0, 255]
        // 400×200 into 200×200: the image is 200×100, 50 px down, bars of bg.
        let (img, _) = try thumb(landscape, "w=200&h=200&mode=pad&bg=ff00ff&format=png")
        #expect(img.width == 200 && img.height == 200)
        for p in [img.pixel(100, 10), img.pixel(100, 45), img.pixel(100, 155), img.pixel(100, 190)] {
            #expect(Array(p.prefix(3)) == magenta)
        }
        #expect(Array(img.pixel(50, 60).prefix(3)) == Fixtures.red)
        #expect(Array(img.pixel(150, 140).prefix(3)) == Fixtures.yellow)

        let (north, _) = try thumb(landscape, "w=200&h=200&mode=pad&gravity=north&bg=ff00ff&format=png")
        #expect(Array(north.pixel(50, 10).prefix(3)) == Fixtures.red)
        #expect(Array(north.pixel(100, 150).prefix(3)) == magenta)

        let (east, _) = try thumb(portrait, "w=200&h=200&mode=pad&gravity=east&bg=ff00ff&format=png")
        #expect(Array(east.pixel(20, 100).prefix(3)) == magenta)
        #expect(Array(east.pixel(180, 20).prefix(3)) == Fixtures.green)
    }

    @Test func padBarsAreTransparentWithAlphaAndWhiteWithout() throws {
        let (png, _) = try thumb(landscape, "w=200&h=200&mode=pad&format=png")
        #expect(png.bands == 4)
        #expect(png.pixel(100, 10)[3] == 0)
        #expect(png.pixel(50, 60) == Fixtures.red + [255])

        let (jpeg, rendered) = try thumb(landscape, "w=200&h=200&mode=pad&format=jpeg")
        #expect(rendered.format == .jpeg && jpeg.bands == 3)
        #expect(near(jpeg.pixel(100, 10), [255, 255, 255], 3))

        // auto without WebP in Accept: transparent bars mean alpha, so PNG.
        let (_, auto) = try thumb(landscape, "w=200&h=200&mode=pad")
        #expect(auto.format == .png)
        let (_, webp) = try thumb(landscape, "w=200&h=200&mode=pad", accept: "image/webp")
        #expect(webp.format == .webp)
        // A half-transparent bg keeps its alpha.
        let (half, _) = try thumb(landscape, "w=200&h=200&mode=pad&bg=0000ff80&format=png")
        #expect(half.pixel(100, 10) == [0, 0, 255, 128])
    }
}
