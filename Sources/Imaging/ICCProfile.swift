import Foundation

/// What an embedded ICC profile means for the output, read from its bytes (the header and
/// the tag table of ICC.1): nothing to do when it describes sRGB, a conversion otherwise.
public enum ICCProfile {
    public enum Kind: Sendable, Equatable {
        /// No profile: the pixels are taken as sRGB.
        case none
        /// A profile that describes sRGB (the colorants and tone curves of IEC 61966-2-1):
        /// converting would change nothing but cost time.
        case sRGB
        /// Any other: the pixels are converted to sRGB.
        case other
    }

    /// sRGB's colorants adapted to D50, as ICC profiles store them (rXYZ, gXYZ, bXYZ).
    static let sRGBColorants: [[Double]] = [
        [0.4361, 0.2225, 0.0139], [0.3851, 0.7169, 0.0971], [0.1431, 0.0606, 0.7141],
    ]

    /// How close a profile must be to sRGB to be taken as it: colorants within 0.002 (a
    /// profile rounds them to s15Fixed16, and different makers adapt with slightly
    /// different matrices), tone curves within 0.5% at a few points.
    static let colorantTolerance = 0.002
    static let curveTolerance = 0.005

    public static func kind(_ bytes: [UInt8]?) -> Kind {
        guard let bytes, !bytes.isEmpty else { return .none }
        return isSRGB(bytes) ? .sRGB : .other
    }

    /// An RGB display profile with sRGB's colorants and tone curve in all three channels.
    public static func isSRGB(_ p: [UInt8]) -> Bool {
        guard p.count >= 132, ascii(p, 16) == "RGB ", ascii(p, 20) == "XYZ " else { return false }
        let tags = tagTable(p)
        for (name, expected) in zip(["rXYZ", "gXYZ", "bXYZ"], sRGBColorants) {
            guard let t = tags[name], let xyz = readXYZ(p, t),
                zip(xyz, expected).allSatisfy({ abs($0 - $1) <= colorantTolerance })
            else { return false }
        }
        for name in ["rTRC", "gTRC", "bTRC"] {
            guard let t = tags[name], let curve = readCurve(p, t) else { return false }
            for x in [0.02, 0.2, 0.5, 0.8, 1.0] where abs(curve(x) - sRGBDecode(x)) > curveTolerance { return false }
        }
        return true
    }

    /// IEC 61966-2-1's decoding function.
    static func sRGBDecode(_ v: Double) -> Double {
        v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    private static func ascii(_ p: [UInt8], _ at: Int) -> String? {
        guard at + 4 <= p.count else { return nil }
        return String(bytes: p[at..<at + 4], encoding: .ascii)
    }

    private static func u32(_ p: [UInt8], _ at: Int) -> UInt32? {
        guard at >= 0, at + 4 <= p.count else { return nil }
        return p[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static func u16(_ p: [UInt8], _ at: Int) -> UInt16? {
        guard at >= 0, at + 2 <= p.count else { return nil }
        return UInt16(p[at]) << 8 | UInt16(p[at + 1])
    }

    private static func s15f16(_ p: [UInt8], _ at: Int) -> Double? {
        u32(p, at).map { Double(Int32(bitPattern: $0)) / 65536 }
    }

    /// Tag signature → (offset, size), for the tags that lie inside the profile.
    private static func tagTable(_ p: [UInt8]) -> [String: (Int, Int)] {
        guard let count = u32(p, 128), count < 1000 else { return [:] }
        var tags: [String: (Int, Int)] = [:]
        for i in 0..<Int(count) {
            let at = 132 + 12 * i
            guard let name = ascii(p, at), let offset = u32(p, at + 4), let size = u32(p, at + 8),
                Int(offset) + Int(size) <= p.count
            else { break }
            tags[name] = (Int(offset), Int(size))
        }
        return tags
    }

    private static func readXYZ(_ p: [UInt8], _ tag: (Int, Int)) -> [Double]? {
        guard tag.1 >= 20, ascii(p, tag.0) == "XYZ " else { return nil }
        return [8, 12, 16].compactMap { s15f16(p, tag.0 + $0) }
    }

    /// The tone curve of a `curv` or `para` tag, as a function on 0…1.
    private static func readCurve(_ p: [UInt8], _ tag: (Int, Int)) -> ((Double) -> Double)? {
        let at = tag.0
        switch ascii(p, at) {
        case "curv":
            guard let n = u32(p, at + 8).map(Int.init), 12 + 2 * n <= tag.1 else { return nil }
            if n == 0 { return { $0 } }
            if n == 1 {
                guard let g = u16(p, at + 12) else { return nil }
                let gamma = Double(g) / 256
                return { pow($0, gamma) }
            }
            let table = (0..<n).compactMap { u16(p, at + 12 + 2 * $0) }.map { Double($0) / 65535 }
            guard table.count == n else { return nil }
            return { x in
                let pos = min(max(x, 0), 1) * Double(n - 1)
                let i = min(Int(pos), n - 2)
                let f = pos - Double(i)
                return table[i] * (1 - f) + table[i + 1] * f
            }
        case "para":
            guard let type = u16(p, at + 8) else { return nil }
            let counts = [1, 3, 4, 5, 7]
            guard Int(type) < counts.count else { return nil }
            let v = (0..<counts[Int(type)]).compactMap { s15f16(p, at + 12 + 4 * $0) }
            guard v.count == counts[Int(type)] else { return nil }
            let g = v[0]
            switch type {
            case 0: return { pow($0, g) }
            case 1: return { x in x >= -v[2] / v[1] ? pow(v[1] * x + v[2], g) : 0 }
            case 2: return { x in x >= -v[2] / v[1] ? pow(v[1] * x + v[2], g) + v[3] : v[3] }
            case 3: return { x in x >= v[4] ? pow(v[1] * x + v[2], g) : v[3] * x }
            default: return { x in x >= v[4] ? pow(v[1] * x + v[2], g) + v[5] : v[3] * x + v[6] }
            }
        default:
            return nil
        }
    }
}
