import Foundation

/// ICC v2 RGB display profiles of the matrix/TRC kind, built by the tests: the header,
/// the tag table, white point, the three colorants, and one tone curve for all channels
/// (a 1024-entry table of sRGB's, so only the primaries differ from sRGB's).
public enum ICCProfileMaker {
    /// D50-adapted colorants (rXYZ, gXYZ, bXYZ).
    public typealias Colorants = [[Double]]

    public static let sRGB: Colorants = [
        [0.4361, 0.2225, 0.0139], [0.3851, 0.7169, 0.0971], [0.1431, 0.0606, 0.7141],
    ]
    /// Display P3 (DCI-P3 primaries, D65 white, sRGB's curve), adapted to D50 as Apple's
    /// profile stores them.
    public static let displayP3: Colorants = [
        [0.5151, 0.2412, -0.0011], [0.2920, 0.6922, 0.0419], [0.1571, 0.0666, 0.7841],
    ]
    /// sRGB's primaries moved one channel along: the stored red is shown as sRGB's green,
    /// green as blue, blue as red. A stored (200, 30, 30) is the sRGB colour (30, 200, 30).
    public static let rotatedSRGB: Colorants = [sRGB[1], sRGB[2], sRGB[0]]

    public static func profile(_ colorants: Colorants, description: String) -> [UInt8] {
        func be32(_ v: UInt32) -> [UInt8] {
            [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
        }
        func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
        func fixed(_ d: Double) -> [UInt8] { be32(UInt32(bitPattern: Int32((d * 65536).rounded()))) }
        func sig(_ s: String) -> [UInt8] { Array(s.utf8) }
        func xyz(_ v: [Double]) -> [UInt8] { sig("XYZ ") + [0, 0, 0, 0] + v.flatMap(fixed) }
        let curve: [UInt8] =
            sig("curv") + [0, 0, 0, 0] + be32(1024)
            + (0..<1024).flatMap { i -> [UInt8] in
                let x = Double(i) / 1023
                let y = x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4)
                return be16(UInt16((y * 65535).rounded()))
            }
        let ascii = Array(description.utf8) + [0]
        let desc: [UInt8] =
            sig("desc") + [0, 0, 0, 0] + be32(UInt32(ascii.count)) + ascii + be32(0) + be32(0) + be16(0) + [0]
            + [UInt8](repeating: 0, count: 67)
        let d50 = [0.9642, 1.0, 0.8249]
        let tags: [(String, [UInt8])] = [
            ("desc", desc), ("wtpt", xyz(d50)), ("rXYZ", xyz(colorants[0])), ("gXYZ", xyz(colorants[1])),
            ("bXYZ", xyz(colorants[2])), ("rTRC", curve), ("gTRC", curve), ("bTRC", curve),
        ]
        // Data after the header and the table, each tag on a 4-byte boundary; the three
        // TRC entries share one curve's bytes.
        var offset = 128 + 4 + 12 * tags.count
        var table: [UInt8] = be32(UInt32(tags.count))
        var data: [UInt8] = []
        var curveOffset: Int?
        for (name, bytes) in tags {
            let at: Int
            if name.hasSuffix("TRC"), let shared = curveOffset {
                at = shared
            } else {
                at = offset
                data += bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
                offset += bytes.count + (4 - bytes.count % 4) % 4
                if name.hasSuffix("TRC") { curveOffset = at }
            }
            table += sig(name) + be32(UInt32(at)) + be32(UInt32(bytes.count))
        }
        let size = 128 + table.count + data.count
        var header: [UInt8] = be32(UInt32(size)) + sig("none") + [0x02, 0x10, 0, 0] + sig("mntr") + sig("RGB ")
        header += sig("XYZ ") + [0x07, 0xEA, 0, 12, 0, 3, 0, 0, 0, 0, 0, 0] + sig("acsp") + [0, 0, 0, 0]
        header += [UInt8](repeating: 0, count: 4 + 4 + 4 + 8) + be32(0) + d50.flatMap(fixed) + sig("none")
        header += [UInt8](repeating: 0, count: 128 - header.count)
        return header + table + data
    }
}
