/// An image's average and dominant colour, for a background while it loads.
public enum Colours {
    /// The mean of the opaque parts, weighted by alpha, as `#rrggbb`; nil when all clear.
    public static func average(rgba: [UInt8]) -> String? {
        var (r, g, b, a) = (0.0, 0.0, 0.0, 0.0)
        for i in stride(from: 0, to: rgba.count - 3, by: 4) {
            let w = Double(rgba[i + 3]) / 255
            r += Double(rgba[i]) * w
            g += Double(rgba[i + 1]) * w
            b += Double(rgba[i + 2]) * w
            a += w
        }
        guard a > 0 else { return nil }
        return hex(Int((r / a).rounded()), Int((g / a).rounded()), Int((b / a).rounded()))
    }

    /// The mean of the most populous box when each channel is cut into 8 levels (512
    /// boxes), over pixels at least half opaque: the colour most of the image is near.
    public static func dominant(rgba: [UInt8]) -> String? {
        var count = [Int](repeating: 0, count: 512)
        var sums = [(Int, Int, Int)](repeating: (0, 0, 0), count: 512)
        for i in stride(from: 0, to: rgba.count - 3, by: 4) where rgba[i + 3] >= 128 {
            let (r, g, b) = (Int(rgba[i]), Int(rgba[i + 1]), Int(rgba[i + 2]))
            let box = (r >> 5) << 6 | (g >> 5) << 3 | (b >> 5)
            count[box] += 1
            sums[box].0 += r
            sums[box].1 += g
            sums[box].2 += b
        }
        guard let best = count.indices.max(by: { count[$0] < count[$1] }), count[best] > 0 else { return nil }
        let n = Double(count[best])
        let s = sums[best]
        return hex(
            Int((Double(s.0) / n).rounded()), Int((Double(s.1) / n).rounded()), Int((Double(s.2) / n).rounded()))
    }

    static func hex(_ r: Int, _ g: Int, _ b: Int) -> String {
        let digits = Array("0123456789abcdef")
        var out = "#"
        for v in [r, g, b] {
            let c = max(0, min(255, v))
            out.append(digits[c >> 4])
            out.append(digits[c & 15])
        }
        return out
    }
}
