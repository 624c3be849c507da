import Foundation
import ImagingTestSupport
import TestSupport
import Testing

@testable import Imaging

/// Only the loaders of `images.formats` are ever reached (SPEC: Source formats): bytes of
/// any other format libvips (or ImageMagick under it) could read, named `.jpg`, are a 415
/// naming what is decoded, and the blocked loaders refuse to run even when asked directly.
@Suite struct LoaderAllowlistTests {
    /// Tiny but well-formed files of formats outside the list.
    static let files: [(name: String, bytes: [UInt8])] = {
        func text(_ s: String) -> [UInt8] { Array(s.utf8) }
        let cards = [
            "SIMPLE  =                    T", "BITPIX  =                    8", "NAXIS   =                    2",
            "NAXIS1  =                    2", "NAXIS2  =                    2", "END",
        ]
        var fits = text(cards.map { $0.padding(toLength: 80, withPad: " ", startingAt: 0) }.joined())
        fits += [UInt8](repeating: 0x20, count: 2880 - fits.count) + [1, 2, 3, 4] + [UInt8](repeating: 0, count: 2876)
        var bmp = text("BM") + [70, 0, 0, 0, 0, 0, 0, 0, 54, 0, 0, 0, 40, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 24, 0]
        bmp += [UInt8](repeating: 0, count: 24) + [UInt8](repeating: 0x80, count: 16)
        let ico: [UInt8] = [0, 0, 1, 0, 1, 0, 2, 2, 0, 0, 1, 0, 32, 0, 48, 0, 0, 0, 22, 0, 0, 0] + bmp.dropFirst(14)
        return [
            ("fits.jpg", fits), ("csv.jpg", text("1,2,3\n4,5,6\n")), ("matrix.jpg", text("2 2\n1 2\n3 4\n")),
            ("ppm.jpg", text("P6\n2 2\n255\n") + (1...12).map { UInt8($0) }), ("bmp.jpg", bmp), ("ico.jpg", ico),
            ("vips.jpg", [0x08, 0xF2, 0xA6, 0xB6] + [UInt8](repeating: 0, count: 60)),
        ]
    }()

    @Test func otherFormatsUnderAJpegNameAre415() throws {
        let dir = try ServeProcess.sampleFolder("loaders")
        for f in Self.files { try Data(f.bytes).write(to: dir.appendingPathComponent("images/\(f.name)")) }
        let s = try ServeProcess(samples: dir)
        for f in Self.files {
            let r = try ServiceTests.get(s.port, "/thumb?src=\(f.name)&w=10")
            #expect(r.status == 415, "\(f.name): \(r.status) \(r.text)")
            #expect(
                r.text.contains("it decodes gif, heif, jpeg, jxl, mkv, mp4, pdf, png, svg, tiff, webm, webp"),
                "\(f.name): \(r.text)")
        }
        #expect(try ServiceTests.get(s.port, "/thumb?src=landscape.jpg&w=10").status == 200)
    }

    /// Blocked in libvips itself: a PPM or a matrix file, which libvips reads when its
    /// loaders are free, fails to load once the service's list is applied; listed formats
    /// still load. (Process-wide: the list here is every format the service can name, so
    /// the other tests in this process are not affected.)
    @Test func blockedLoadersDoNotRunEvenWhenCalled() throws {
        try Vips.restrictLoaders(to: Set(["jpeg", "png", "webp", "gif", "heif", "tiff", "svg", "pdf", "jxl", "jp2k"]))
        for name in ["ppm.jpg", "matrix.jpg", "fits.jpg", "csv.jpg"] {
            let bytes = try #require(Self.files.first { $0.name == name }).bytes
            #expect(throws: ImagingError.self, "\(name) was loaded") { _ = try ImageFile.decode(bytes) }
        }
        let png = try ImageFile.encode(
            RawImage(width: 2, height: 2, bands: 3, pixels: [UInt8](repeating: 9, count: 12)), as: .png)
        #expect(try ImageFile.decode(png).width == 2)
    }
}
