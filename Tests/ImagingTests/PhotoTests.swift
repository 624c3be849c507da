import Core
import Foundation
import Imaging
import ImagingTestSupport
import TestSupport
import Testing

/// The team's real photos (../shared/images, or the same files fetched from Debian by
/// scripts/fetch-photos.sh) through the pipeline, each compared with a reference made
/// without libvips' resampler: the full decode, area-averaged in Swift.
@Suite struct PhotoTests {
    static var folder: URL? { Photos.folder }

    static func photo(_ name: String) throws -> String { try Photos.path(name) }

    /// Area average of `raw` scaled to `size`, then the `window` of it.
    static func reference(_ raw: RawImage, resized size: Size, window: Rect) -> RawImage {
        let b = raw.bands
        var out = [UInt8](repeating: 0, count: window.width * window.height * b)
        let sx = Double(raw.width) / Double(size.width)
        let sy = Double(raw.height) / Double(size.height)
        raw.pixels.withUnsafeBufferPointer { px in
            for oy in 0..<window.height {
                let y0 = Int((Double(oy + window.y) * sy).rounded(.down))
                let y1 = max(y0 + 1, min(raw.height, Int((Double(oy + window.y + 1) * sy).rounded(.up))))
                for ox in 0..<window.width {
                    let x0 = Int((Double(ox + window.x) * sx).rounded(.down))
                    let x1 = max(x0 + 1, min(raw.width, Int((Double(ox + window.x + 1) * sx).rounded(.up))))
                    var sums = [Int](repeating: 0, count: b)
                    for y in y0..<y1 {
                        var i = (y * raw.width + x0) * b
                        for _ in x0..<x1 {
                            for k in 0..<b { sums[k] += Int(px[i + k]) }
                            i += b
                        }
                    }
                    let n = (y1 - y0) * (x1 - x0)
                    for k in 0..<b { out[(oy * window.width + ox) * b + k] = UInt8(sums[k] / n) }
                }
            }
        }
        return RawImage(width: window.width, height: window.height, bands: b, pixels: out)
    }

    static func meanDifference(_ a: RawImage, _ b: RawImage) -> Double {
        let n = min(a.pixels.count, b.pixels.count)
        var total = 0
        for i in 0..<n { total += abs(Int(a.pixels[i]) - Int(b.pixels[i])) }
        return Double(total) / Double(n)
    }

    func check(_ path: String, _ query: String, upright: RawImage, maxDifference: Double) throws -> Double {
        let (img, rendered) = try thumb(path, query)
        let plan = rendered.plan
        #expect(Size(width: img.width, height: img.height) == plan.output)
        #expect(plan.source == Size(width: upright.width, height: upright.height))
        let window = plan.crop ?? Rect(x: 0, y: 0, width: plan.resized.width, height: plan.resized.height)
        let ref = Self.reference(upright, resized: plan.resized, window: window)
        #expect(img.bands == ref.bands)
        let d = Self.meanDifference(img, ref)
        // Seen: 0.7 to 1.7 on the photos, 4.5 on alpha.png (libvips resamples alpha
        // premultiplied; the plain average here does not).
        #expect(d < maxDifference, "\(path) \(query): mean difference \(d) from the reference")
        return d
    }

    @Test(arguments: ["big.jpg", "medium.jpg"])
    func photosThumbnailToTheirReference(name: String) throws {
        let path = try Self.photo(name)
        let full = try ImageFile.decode(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        _ = try check(path, "w=300&h=225&mode=fill&format=png", upright: full, maxDifference: 3)
        _ = try check(path, "w=300&mode=fit&format=png", upright: full, maxDifference: 3)
        let (jpeg, rendered) = try thumb(path, "w=300&h=225&mode=fill")
        #expect(rendered.format == .jpeg && jpeg.width == 300 && jpeg.height == 225)
    }

    @Test func alphaArtworkKeepsItsAlpha() throws {
        let path = try Self.photo("alpha.png")
        let full = try ImageFile.decode(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(full.bands == 4)
        let (img, rendered) = try thumb(path, "w=300&mode=fit")
        #expect(rendered.format == .png && img.bands == 4)
        let alphas = Set(stride(from: 3, to: img.pixels.count, by: 4).map { img.pixels[$0] })
        #expect(alphas.contains(0) && alphas.contains { $0 > 0 && $0 < 255 }, "a full range of alpha survives")
        _ = try check(path, "w=300&mode=fit&format=png", upright: full, maxDifference: 7)
    }

    @Test func exifRotatedPhotosComeOutUpright() throws {
        let big = try Self.photo("big.jpg")
        let full = try ImageFile.decode(Array(try Data(contentsOf: URL(fileURLWithPath: big))))
        // One made here: the landscape photo stored 90° counter-clockwise with
        // Orientation=6, as a camera held sideways writes it; and portrait.jpg (a crop of
        // it, upright 2400×3200, made by scripts/fetch-photos.sh as the team's copy is).
        let fixtures = try Fixtures()
        let made = try fixtures.write(
            "rotated.jpg", ImageFile.encode(Fixtures.rotated(full, turns: 3), as: .jpeg, quality: 95, orientation: 6))
        let shared = try Self.photo("portrait.jpg")
        let upright = try Self.upright(shared)
        #expect(upright.height > upright.width)
        let cases = [(made, full), (shared, upright)]
        for (path, upright) in cases {
            let info = try Thumbnailer(limits: ImagingLimits()).probe(path: path)
            #expect(info.orientation == 6)
            #expect(info.size == Size(width: upright.width, height: upright.height))
            let query =
                upright.height > upright.width ? "w=225&h=300&mode=fill&format=png" : "w=300&h=225&mode=fill&format=png"
            let d = try check(path, query, upright: upright, maxDifference: 3)
            // Against the upside-down reading it is clearly worse: the check can tell.
            let (img, rendered) = try thumb(path, query)
            let turned = Self.reference(
                Fixtures.rotated(upright, turns: 2), resized: rendered.plan.resized,
                window: rendered.plan.crop ?? Rect(x: 0, y: 0, width: img.width, height: img.height))
            #expect(
                Self.meanDifference(img, turned) > 2 * d + 5, "\(path): \(d) vs \(Self.meanDifference(img, turned))")
        }
    }

    /// The shared portrait decoded as stored and turned upright by its orientation 6.
    static func upright(_ path: String) throws -> RawImage {
        Fixtures.rotated(try ImageFile.decode(Array(try Data(contentsOf: URL(fileURLWithPath: path)))), turns: 1)
    }
}
