import Core
import Foundation
import Imaging
import ImagingTestSupport
import Testing

/// Sources with 16 bits a channel (SPEC: Source formats, "More than 8 bits a channel"):
/// 16-bit PNG and TIFF come out as 8-bit sRGB, each level where it belongs (v16 / 257),
/// with no banding: a smooth 16-bit ramp keeps every 8-bit step it spans. The fixtures are
/// written here byte by byte (a stored-deflate PNG, an uncompressed TIFF), so no encoder of
/// libvips' own decides what they hold.
@Suite struct DeepColourTests {
    /// A grey ramp, 16 bits a channel, RGB: column x holds (x × 65535) / (width − 1).
    static func ramp(width: Int, height: Int) -> [UInt16] {
        var px: [UInt16] = []
        for _ in 0..<height {
            for x in 0..<width {
                let v = UInt16(x * 65535 / (width - 1))
                px += [v, v, v]
            }
        }
        return px
    }

    static func bigEndian(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8(v >> 16 & 255), UInt8(v >> 8 & 255), UInt8(v & 255)]
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            c ^= UInt32(b)
            for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        }
        return ~c
    }

    /// A 16-bit RGB PNG, its rows in stored (uncompressed) deflate blocks.
    static func png16(width: Int, height: Int, _ px: [UInt16]) -> [UInt8] {
        var raw: [UInt8] = []
        for y in 0..<height {
            raw.append(0)  // filter: none
            for v in px[(y * width * 3)..<((y + 1) * width * 3)] { raw += [UInt8(v >> 8), UInt8(v & 255)] }
        }
        var z: [UInt8] = [0x78, 0x01]
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in raw {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        var rest = raw[...]
        repeat {
            let block = rest.prefix(65535)
            rest = rest.dropFirst(block.count)
            let n = UInt16(block.count)
            z += [rest.isEmpty ? 1 : 0, UInt8(n & 255), UInt8(n >> 8), UInt8(~n & 255), UInt8(~n >> 8)] + block
        } while !rest.isEmpty
        z += bigEndian(b << 16 | a)
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
        }
        let header = bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [16, 2, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", z)
            + chunk("IEND", [])
    }

    /// A 16-bit RGB TIFF, little-endian, one uncompressed strip.
    static func tiff16(width: Int, height: Int, _ px: [UInt16]) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 255), UInt8(v >> 8 & 255)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16) }
        let data = px.flatMap { [UInt8($0 & 255), UInt8($0 >> 8)] }
        let entries: [(Int, Int, Int, Int)] = [  // tag, type (3 short, 4 long), count, value or offset
            (256, 4, 1, width), (257, 4, 1, height), (258, 3, 3, 0), (259, 3, 1, 1), (262, 3, 1, 2),
            (273, 4, 1, 0), (277, 3, 1, 3), (278, 4, 1, height), (279, 4, 1, data.count),
        ]
        let ifdAt = 8
        let bitsAt = ifdAt + 2 + entries.count * 12 + 4
        let dataAt = bitsAt + 6
        var out: [UInt8] = Array("II".utf8) + le16(42) + le32(ifdAt) + le16(entries.count)
        for (tag, type, count, value) in entries {
            let v = tag == 258 ? bitsAt : tag == 273 ? dataAt : value
            out += le16(tag) + le16(type) + le32(count) + (type == 3 && count == 1 ? le16(v) + [0, 0] : le32(v))
        }
        return out + le32(0) + le16(16) + le16(16) + le16(16) + data
    }

    @Test(arguments: ["png", "tiff"])
    func sixteenBitSourcesComeOutAsEightBitWithoutBanding(container: String) throws {
        let (w, h) = (1024, 8)
        let px = Self.ramp(width: w, height: h)
        let bytes = container == "png" ? Self.png16(width: w, height: h, px) : Self.tiff16(width: w, height: h, px)
        let fixtures = try Fixtures()
        let path = try fixtures.write("ramp.jpg", bytes)
        let info = try Thumbnailer(limits: ImagingLimits()).probe(path: path)
        #expect(info.format == container && info.size == Size(width: w, height: h))
        // At its own size (no resampling), lossless: each pixel is its 16-bit value / 257.
        let (img, rendered) = try thumb(path, "w=\(w)&format=png")
        #expect(rendered.format == .png && img.width == w && img.height == h && img.bands == 3)
        var worst = 0
        var levels = Set<UInt8>()
        for x in 0..<w {
            let got = img.pixel(x, h / 2)[0]
            levels.insert(got)
            worst = max(worst, abs(Int(got) - Int((Double(px[x * 3]) / 257).rounded())))
        }
        #expect(worst <= 1, "\(container): a level is off by \(worst)")
        #expect(levels.count == 256, "\(container): \(levels.count) of 256 levels: banding")
    }
}
