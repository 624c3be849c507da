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
    static func png16(width: Int, height: Int, _ px: [UInt16], cicp: [UInt8]? = nil) -> [UInt8] {
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
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header)
            + (cicp.map { chunk("cICP", $0) } ?? []) + chunk("IDAT", z) + chunk("IEND", [])
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
        let (worst, count) = try Self.levels(path, width: w, height: h, px)
        #expect(worst <= 1, "\(container): a level is off by \(worst)")
        #expect(count == 256, "\(container): \(count) of 256 levels: banding")
    }

    /// The ramp's levels at its own size: the worst distance from v16 / 257, and how many
    /// distinct levels are left.
    static func levels(_ path: String, width w: Int, height h: Int, _ px: [UInt16]) throws -> (worst: Int, count: Int) {
        let (img, rendered) = try thumb(path, "w=\(w)&format=png")
        #expect(rendered.format == .png && img.width == w && img.height == h && img.bands == 3)
        var worst = 0
        var levels = Set<UInt8>()
        for x in 0..<w {
            let got = img.pixel(x, h / 2)[0]
            levels.insert(got)
            worst = max(worst, abs(Int(got) - Int((Double(px[x * 3]) / 257).rounded())))
        }
        return (worst, levels.count)
    }

    /// 10- and 12-bit HEIF and AVIF, and 16-bit JPEG XL: libvips 8.14 reads them as 16-bit
    /// (`rgb16`), and they come out as 8-bit sRGB with every level where it belongs.
    @Test(arguments: [("heif", 10), ("avif", 12), ("jxl", 16)])
    func deepHEIFAVIFAndJXLComeOutWithoutBanding(container: String, bits: Int) throws {
        let (w, h) = (1024, 8)
        let px = Self.ramp(width: w, height: h)
        let bytes = try ImageFile.transcodeLosslessly(
            Self.png16(width: w, height: h, px), to: container == "jxl" ? .jxl : container == "avif" ? .avif : .heic,
            bitdepth: bits)
        let fixtures = try Fixtures()
        let path = try fixtures.write("ramp.\(container)", bytes)
        let info = try Thumbnailer(limits: ImagingLimits()).probe(path: path)
        #expect(info.format == (container == "jxl" ? "jxl" : "heif"), "\(info)")
        let (worst, count) = try Self.levels(path, width: w, height: h, px)
        // Lossless at 10 bits rounds each 16-bit value to one of 1024: within 1 of 8 bits.
        #expect(worst <= 1, "\(container) \(bits)-bit: a level is off by \(worst)")
        #expect(count == 256, "\(container) \(bits)-bit: \(count) of 256 levels: banding")
    }

    /// A 12-bit AVIF whose nclx box says BT.2020 primaries and `transfer` (16 PQ, 18 HLG):
    /// libvips makes it, and the test rewrites the box's code points in place.
    static func hdrAVIF(_ px: [UInt16], width: Int, height: Int, transfer: UInt8) throws -> [UInt8] {
        var bytes = try ImageFile.transcodeLosslessly(
            Self.png16(width: width, height: height, px), to: .avif, bitdepth: 12)
        let nclx = Array("nclx".utf8)
        let at = try #require((0..<(bytes.count - 8)).first { bytes[$0..<($0 + 4)].elementsEqual(nclx) })
        bytes[at + 4..<at + 8] = [0, 9, 0, transfer][...]
        return bytes
    }

    /// PQ and HLG are tone-mapped (SPEC: Colour and metadata): diffuse white (203 cd/m²:
    /// PQ code 0.58, HLG code 0.75) comes out near white, not the grey its code value
    /// would be read as sRGB; black stays black, brighter never comes out darker, and grey
    /// stays grey.
    @Test(arguments: [("avif-pq", 16), ("avif-hlg", 18), ("png-pq", 16), ("png-hlg", 18)])
    func hdrSourcesAreToneMappedToSDR(kind: String, transfer: UInt8) throws {
        let (w, h) = (1024, 8)
        let px = Self.ramp(width: w, height: h)
        let bytes =
            kind.hasPrefix("avif")
            ? try Self.hdrAVIF(px, width: w, height: h, transfer: transfer)
            : Self.png16(width: w, height: h, px, cicp: [9, transfer, 0, 1])
        let fixtures = try Fixtures()
        let path = try fixtures.write("hdr", bytes)
        let (img, _) = try thumb(path, "w=\(w)&format=png")
        let row = (0..<w).map { img.pixel($0, h / 2) }
        let white = Int(((transfer == 16 ? 0.58 : 0.75) * Double(w - 1)).rounded())
        #expect(row[white][0] >= 235, "\(kind): diffuse white came out \(row[white])")
        #expect(row[0][0] <= 2)
        #expect(zip(row, row.dropFirst()).allSatisfy { Int($1[0]) + 1 >= Int($0[0]) }, "\(kind): not monotonic")
        #expect(
            row.allSatisfy { Int(max($0[0], $0[1], $0[2])) - Int(min($0[0], $0[1], $0[2])) <= 2 }, "\(kind): not grey")
        // The same bytes not tagged: read as sRGB, the same code is mid-grey.
        let plain = try fixtures.write(
            "plain",
            kind.hasPrefix("avif")
                ? try Self.hdrAVIF(px, width: w, height: h, transfer: 13) : Self.png16(width: w, height: h, px))
        let (flat, _) = try thumb(plain, "w=\(w)&format=png")
        #expect(flat.pixel(white, h / 2)[0] < 200)
    }
}
