import Core
import Foundation
import ImagingTestSupport
import Syscalls
import Testing

@testable import Imaging

/// A PNG with alpha whose result is flattened anyway is flattened as it is decoded, and
/// resizes in 8 bits (issue 53): the picture is the one a flatten after the resize gives,
/// and where anything between would read the alpha apart from the colour, it is not done.
@Suite struct FlattenFirstTests {
    let fixtures: Fixtures
    let source: String

    /// 240×160: a red-to-blue ramp across, its alpha falling from 255 at the top to 0 at
    /// the bottom, with a fully transparent stripe of green down the middle.
    init() throws {
        fixtures = try Fixtures()
        var pixels: [UInt8] = []
        for y in 0..<160 {
            for x in 0..<240 {
                let stripe = (110..<130).contains(x)
                let r = UInt8(255 - x * 255 / 239)
                pixels += stripe ? [0, 255, 0, 0] : [r, 0, 255 - r, UInt8(255 - y * 255 / 159)]
            }
        }
        source = try fixtures.write(
            "ramp.png", ImageFile.encode(RawImage(width: 240, height: 160, bands: 4, pixels: pixels), as: .png))
    }

    /// The same request as PNG (alpha kept, resized premultiplied), flattened onto `bg` here.
    func flattenedByHand(_ query: String, bg: [Double]) throws -> RawImage {
        let (png, _) = try thumb(source, query + "&format=png")
        #expect(png.bands == 4)
        var out: [UInt8] = []
        for i in stride(from: 0, to: png.pixels.count, by: 4) {
            let a = Double(png.pixels[i + 3]) / 255
            for c in 0..<3 {
                out.append(UInt8((Double(png.pixels[i + c]) * a + bg[c] * (1 - a)).rounded()))
            }
        }
        return RawImage(width: png.width, height: png.height, bands: 3, pixels: out)
    }

    @Test(arguments: ["w=120&h=80&mode=fill", "w=60&h=60&mode=fill&gravity=north", "w=100&h=100&mode=pad&bg=ff8000"])
    func aJPEGIsThePictureFlattenedAfterTheResize(_ query: String) throws {
        let bg: [Double] = query.contains("bg=ff8000") ? [255, 128, 0] : [255, 255, 255]
        let expected = try flattenedByHand(query, bg: bg)
        let (jpeg, _) = try thumb(source, query + "&format=jpeg&q=100")
        #expect(jpeg.width == expected.width && jpeg.height == expected.height)
        var total = 0
        var most = 0
        for (a, b) in zip(jpeg.pixels, expected.pixels) {
            let d = abs(Int(a) - Int(b))
            total += d
            most = max(most, d)
        }
        let mean = Double(total) / Double(max(1, jpeg.pixels.count))
        #expect(mean < 1.5 && most <= 12, "\(query): mean \(mean), most \(most)")
    }

    /// Only where nothing between reads the alpha: not for a PNG result, a blur, a
    /// watermark's neighbours, a planner's canvas fill, or a window libvips chooses.
    @Test func onlyWhereTheResultIsFlattenedAndNothingReadsTheAlpha() throws {
        let t = try Thumbnailer(limits: ImagingLimits())
        let file = try OpenFile.opening(source)
        let info = try t.open(file: file, reading: SourceReading(), deadline: .none).info
        func plan(_ query: String) throws -> Plan {
            try RenderOrder.plan(
                try request(query), source: info.description, limits: RequestLimits(), accept: nil
            ).plan
        }
        let jpeg = try plan("w=100&h=100&mode=fill")
        #expect(Thumbnailer.flattensFirst(jpeg, format: .jpeg, info) == .white)
        #expect(Thumbnailer.flattensFirst(jpeg, format: .png, info) == nil)
        #expect(Thumbnailer.flattensFirst(try plan("w=100&blur=2"), format: .jpeg, info) == nil)
        #expect(Thumbnailer.flattensFirst(try plan("w=100&h=100&mode=fill&gravity=smart"), format: .jpeg, info) == nil)
        var filled = jpeg
        filled.canvasFill = .mean
        #expect(Thumbnailer.flattensFirst(filled, format: .jpeg, info) == nil)
        var asked = jpeg
        asked.flattened = true
        asked.background = Color(red: 1, green: 2, blue: 3)
        #expect(Thumbnailer.flattensFirst(asked, format: .webp, info) == Color(red: 1, green: 2, blue: 3))
    }
}
