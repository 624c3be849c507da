internal import CVips
import Core
import Foundation
import Syscalls

/// How a source codes high dynamic range (SPEC: Colour and metadata): its transfer (PQ or
/// HLG) and primaries, from a HEIF or AVIF's nclx or a PNG's cICP. libvips 8.14 reads
/// neither, and would show the coded values as if they were sRGB: washed out, or dark.
struct HDRCoding: Equatable, Sendable {
    enum Transfer: Sendable { case pq, hlg }
    enum Primaries: Sendable { case bt709, bt2020, displayP3 }

    var transfer: Transfer
    var primaries: Primaries

    /// From ISO/IEC 23091-2 code points; nil unless the transfer is PQ (16) or HLG (18).
    init?(primaries: Int, transfer: Int) {
        switch transfer {
        case 16: self.transfer = .pq
        case 18: self.transfer = .hlg
        default: return nil
        }
        switch primaries {
        case 9: self.primaries = .bt2020
        case 12: self.primaries = .displayP3
        default: self.primaries = .bt709
        }
    }

    /// What `file` (a source of `format`) says of its transfer, for `page` (from 1).
    static func of(_ file: OpenFile, format: String, page: Int) -> HDRCoding? {
        switch format {
        case "heif":
            var primaries: Int32 = 0
            var transfer: Int32 = 0
            guard cvips_heif_nclx(file.fd, Int32(page - 1), &primaries, &transfer) == 0 else { return nil }
            return HDRCoding(primaries: Int(primaries), transfer: Int(transfer))
        case "png":
            return pngCICP(file)
        default:
            return nil
        }
    }

    /// A PNG's cICP chunk (PNG third edition), looked for among the chunks before the
    /// first IDAT, within the file's first 64 KiB.
    static func pngCICP(_ file: OpenFile) -> HDRCoding? {
        guard let size = file.regularFileSize, let head = file.read(count: Int(min(size, 65_536))) else { return nil }
        var at = 8
        while at + 12 <= head.count {
            let length = head[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: head[at + 4..<at + 8], as: UTF8.self)
            if type == "IDAT" { return nil }
            if type == "cICP", length == 4, at + 12 <= head.count {
                return HDRCoding(primaries: Int(head[at + 8]), transfer: Int(head[at + 9]))
            }
            at += 12 + length
        }
        return nil
    }
}

/// PQ and HLG brought to 8-bit sRGB for a standard display: the coded values to light (the
/// PQ EOTF; for HLG its inverse OETF and a display gamma of 1.2 at 1000 cd/m²), the
/// primaries to BT.709's, then a curve that leaves everything up to 80% of diffuse white
/// (203 cd/m², BT.2408) as it is and rolls the brighter part off smoothly towards white,
/// then sRGB's encoding. Per channel, on the image already resized to the output's size.
enum ToneMap {
    /// cd/m² of diffuse white, which becomes the display's white level (BT.2408).
    static let diffuseWhite = 203.0
    /// Where the roll-off starts, as a fraction of diffuse white.
    static let knee = 0.8

    /// Light relative to diffuse white, for each 16-bit code value.
    static let pqTable: [Float] = (0..<65_536).map { code in
        let (m1, m2) = (2610.0 / 16384, 2523.0 / 4096 * 128)
        let (c1, c2, c3) = (3424.0 / 4096, 2413.0 / 4096 * 32, 2392.0 / 4096 * 32)
        let e = pow(Double(code) / 65535, 1 / m2)
        let nits = 10_000 * pow(max(e - c1, 0) / (c2 - c3 * e), 1 / m1)
        return Float(nits / diffuseWhite)
    }

    static let hlgTable: [Float] = (0..<65_536).map { code in
        let (a, b, c) = (0.17883277, 0.28466892, 0.55991073)
        let v = Double(code) / 65535
        let scene = v <= 0.5 ? v * v / 3 : (exp((v - c) / a) + b) / 12
        return Float(1000 * pow(scene, 1.2) / diffuseWhite)
    }

    /// Linear [0, 1] to 8-bit sRGB, in 4096 steps.
    static let srgbTable: [UInt8] = (0..<4096).map { i in
        let l = Double(i) / 4095
        let v = l <= 0.003_130_8 ? 12.92 * l : 1.055 * pow(l, 1 / 2.4) - 0.055
        return UInt8((v * 255).rounded())
    }

    /// The roll-off: the identity up to the knee, then towards 1, continuous in slope.
    @inline(__always) static func curve(_ x: Float) -> Float {
        let k = Float(knee)
        guard x > k else { return max(x, 0) }
        return k + (1 - k) * (1 - Foundation.exp(-(x - k) / (1 - k)))
    }

    /// Linear RGB of `primaries` to BT.709's (rows of the 3 × 3 matrix).
    static func matrix(_ primaries: HDRCoding.Primaries) -> [Float] {
        switch primaries {
        case .bt709: [1, 0, 0, 0, 1, 0, 0, 0, 1]
        case .bt2020: [1.6605, -0.5876, -0.0728, -0.1246, 1.1329, -0.0083, -0.0182, -0.1006, 1.1187]
        case .displayP3: [1.2249, -0.2247, 0, -0.0420, 1.0419, 0, -0.0197, -0.0786, 1.0979]
        }
    }

    /// `image` (RGB or RGBA, 8 or 16 bits, coded as `coding` says) as 8-bit sRGB.
    static func toSDR(_ image: VImage, _ coding: HDRCoding) throws(ImagingError) -> VImage {
        let bands = image.bands
        guard bands == 3 || bands == 4 else { return image }
        let wide = image.bandFormat == VIPS_FORMAT_USHORT
        guard wide || image.bandFormat == VIPS_FORMAT_UCHAR else { return image }
        let raw = try image.pixels()
        let count = image.width * image.height
        // Every value as a 16-bit code (libvips' memory is in the machine's byte order).
        let codes: [UInt16] =
            wide
            ? raw.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) } : raw.map { UInt16($0) * 257 }
        guard codes.count == count * bands else {
            throw ImagingError(
                .process, AspectError(.internalError, "tone mapping failed"),
                detail: "\(codes.count) values for \(count) pixels of \(bands) bands")
        }
        let table = coding.transfer == .pq ? pqTable : hlgTable
        let m = matrix(coding.primaries)
        var out = [UInt8](repeating: 0, count: count * bands)
        table.withUnsafeBufferPointer { lut in
            srgbTable.withUnsafeBufferPointer { encode in
                for p in 0..<count {
                    let i = p * bands
                    let (r, g, b) = (lut[Int(codes[i])], lut[Int(codes[i + 1])], lut[Int(codes[i + 2])])
                    for c in 0..<3 {
                        let v = curve(m[c * 3] * r + m[c * 3 + 1] * g + m[c * 3 + 2] * b)
                        out[i + c] = encode[Int(min(v, 1) * 4095 + 0.5)]
                    }
                    if bands == 4 { out[i + 3] = UInt8(codes[i + 3] >> 8) }
                }
            }
        }
        let made = try VImage.fromPixels(out, width: image.width, height: image.height, bands: bands)
        return try made.then("colourspace") { cvips_colourspace($0, $1, VIPS_INTERPRETATION_sRGB) }
    }
}
