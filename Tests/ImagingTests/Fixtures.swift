import Core
import Foundation
import Imaging
import ImagingTestSupport

/// Images the tests make themselves, written to a fresh temporary folder.
final class Fixtures: Sendable {
    let dir: URL

    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("aspect-imaging-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: dir) }

    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let url = dir.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    static let red: [UInt8] = [255, 0, 0], green: [UInt8] = [0, 255, 0], blue: [UInt8] = [0, 0, 255]
    static let yellow: [UInt8] = [255, 255, 0]

    /// Four quadrants of distinct colours: top left, top right, bottom left, bottom right.
    static func quadrants(
        width: Int, height: Int, colours: [[UInt8]] = [red, green, blue, yellow]
    ) -> RawImage {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let q = (y < height / 2 ? 0 : 2) + (x < width / 2 ? 0 : 1)
                pixels += colours[q]
            }
        }
        return RawImage(width: width, height: height, bands: 3, pixels: pixels)
    }

    /// The image rotated clockwise by 90° `turns` times.
    static func rotated(_ raw: RawImage, turns: Int) -> RawImage { raw.turned(quarters: turns) }
}

func request(_ query: String) throws -> ThumbRequest {
    try ThumbRequest.parse(query: "src=x&" + query, limits: RequestLimits())
}

/// A thumbnail of the file, decoded.
func thumb(_ path: String, _ query: String, accept: String? = nil, limits: ImagingLimits = ImagingLimits()) throws -> (
    RawImage, Thumbnailer.Rendered
) {
    let t = try Thumbnailer(limits: limits)
    let rendered = try t.thumbnail(
        path: path, request: try request(query), requestLimits: RequestLimits(), accept: accept)
    return (try ImageFile.decode(rendered.bytes), rendered)
}

/// The colours at an image's four quadrant centres: top left, top right, bottom left,
/// bottom right (RGB).
func quadrantCentres(_ img: RawImage) -> [[UInt8]] {
    let (w, h) = (img.width, img.height)
    return [
        img.pixel(w / 4, h / 4), img.pixel(3 * w / 4, h / 4), img.pixel(w / 4, 3 * h / 4),
        img.pixel(3 * w / 4, 3 * h / 4),
    ]
    .map { Array($0.prefix(3)) }
}
