import Foundation

/// A ThumbHash decoded to pixels, to draw while the image loads: RGBA, 8 bits a channel,
/// at most 32 pixels on the long side, in the image's approximate aspect ratio. Evan
/// Wallace's published decoder (https://evanw.github.io/thumbhash/), in Swift.
public struct ThumbHashImage: Equatable, Sendable {
    public let width: Int
    public let height: Int
    public let rgba: [UInt8]

    /// Decodes the hash's bytes; nil when they are too short to be one.
    public init?(hash: [UInt8]) {
        guard let header = Header(hash: hash), let ac = Self.decodeAC(hash, header),
            let ratio = Self.approximateRatio(hash: hash)
        else { return nil }
        let w = Int((ratio > 1 ? 32 : 32 * ratio).rounded())
        let h = Int((ratio > 1 ? 32 / ratio : 32).rounded())
        width = w
        height = h
        rgba = Self.render(header, ac, width: w, height: h)
    }

    /// The fixed fields at the front of a hash: each channel's DC and AC scale, whether
    /// it has alpha, and how many L components it has across and down.
    private struct Header {
        let lDC: Double
        let pDC: Double
        let qDC: Double
        let aDC: Double
        let lScale: Double
        let pScale: Double
        let qScale: Double
        let aScale: Double
        let hasAlpha: Bool
        let lx: Int
        let ly: Int
        /// The index of the first AC byte.
        let acStart: Int

        /// Reads the header; nil when the hash is too short to hold it.
        init?(hash: [UInt8]) {
            guard hash.count >= 5 else { return nil }
            let header24 = Int(hash[0]) | Int(hash[1]) << 8 | Int(hash[2]) << 16
            let header16 = Int(hash[3]) | Int(hash[4]) << 8
            lDC = Double(header24 & 63) / 63
            pDC = Double((header24 >> 6) & 63) / 31.5 - 1
            qDC = Double((header24 >> 12) & 63) / 31.5 - 1
            lScale = Double((header24 >> 18) & 31) / 31
            hasAlpha = header24 >> 23 != 0
            pScale = Double((header16 >> 3) & 63) / 63
            qScale = Double((header16 >> 9) & 63) / 63
            let isLandscape = header16 >> 15 != 0
            lx = max(3, isLandscape ? (hasAlpha ? 5 : 7) : header16 & 7)
            ly = max(3, isLandscape ? header16 & 7 : (hasAlpha ? 5 : 7))
            guard !hasAlpha || hash.count >= 6 else { return nil }
            aDC = hasAlpha ? Double(hash[5] & 15) / 15 : 1
            aScale = hasAlpha ? Double(hash[5] >> 4) / 15 : 0
            acStart = hasAlpha ? 6 : 5
        }
    }

    /// The AC coefficients of each channel, in the order the hash stores them.
    private struct Coefficients {
        let l: [Double]
        let p: [Double]
        let q: [Double]
        let a: [Double]
    }

    /// Reads the AC coefficients, 4 bits each, low nibble first; nil when the hash ends
    /// before they do.
    private static func decodeAC(_ hash: [UInt8], _ header: Header) -> Coefficients? {
        var acIndex = 0
        var truncated = false
        func channel(_ nx: Int, _ ny: Int, _ scale: Double) -> [Double] {
            var ac: [Double] = []
            for cy in 0..<ny {
                var cx = cy > 0 ? 0 : 1
                while cx * ny < nx * (ny - cy) {
                    let byte = header.acStart + (acIndex >> 1)
                    if byte >= hash.count { truncated = true }
                    let v = byte < hash.count ? (Int(hash[byte]) >> ((acIndex & 1) << 2)) & 15 : 0
                    ac.append((Double(v) / 7.5 - 1) * scale)
                    acIndex += 1
                    cx += 1
                }
            }
            return ac
        }
        // Saturation boosted by 1.25 against the quantisation, as the reference does.
        let lAC = channel(header.lx, header.ly, header.lScale)
        let pAC = channel(3, 3, header.pScale * 1.25)
        let qAC = channel(3, 3, header.qScale * 1.25)
        let aAC = header.hasAlpha ? channel(5, 5, header.aScale) : []
        guard !truncated else { return nil }
        return Coefficients(l: lAC, p: pAC, q: qAC, a: aAC)
    }

    /// Renders `w` × `h` RGBA pixels: per pixel, the cosine of each component's
    /// frequency, the channels summed from them, then L, P, Q to R, G, B.
    private static func render(_ header: Header, _ ac: Coefficients, width w: Int, height h: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: w * h * 4)
        var fx = [Double](repeating: 0, count: 8)
        var fy = [Double](repeating: 0, count: 8)
        for y in 0..<h {
            for x in 0..<w {
                for cx in 0..<max(header.lx, header.hasAlpha ? 5 : 3) {
                    fx[cx] = cos(Double.pi / Double(w) * (Double(x) + 0.5) * Double(cx))
                }
                for cy in 0..<max(header.ly, header.hasAlpha ? 5 : 3) {
                    fy[cy] = cos(Double.pi / Double(h) * (Double(y) + 0.5) * Double(cy))
                }
                let (l, p, q, a) = channels(header, ac, fx, fy)
                let b = l - 2 / 3 * p
                let r = (3 * l - b + q) / 2
                let g = r - q
                let i = (y * w + x) * 4
                for (k, v) in [r, g, b, a].enumerated() { out[i + k] = UInt8(max(0, 255 * min(1, v))) }
            }
        }
        return out
    }

    /// One pixel's L, P, Q and alpha: each channel's DC plus its AC coefficients times
    /// the pixel's cosines `fx` (across) and `fy` (down).
    private static func channels(_ header: Header, _ ac: Coefficients, _ fx: [Double], _ fy: [Double])
        -> (l: Double, p: Double, q: Double, a: Double)
    {
        var l = header.lDC
        var p = header.pDC
        var q = header.qDC
        var a = header.aDC
        var j = 0
        for cy in 0..<header.ly {
            var cx = cy > 0 ? 0 : 1
            let fy2 = fy[cy] * 2
            while cx * header.ly < header.lx * (header.ly - cy) {
                l += ac.l[j] * fx[cx] * fy2
                cx += 1
                j += 1
            }
        }
        j = 0
        for cy in 0..<3 {
            var cx = cy > 0 ? 0 : 1
            let fy2 = fy[cy] * 2
            while cx < 3 - cy {
                let f = fx[cx] * fy2
                p += ac.p[j] * f
                q += ac.q[j] * f
                cx += 1
                j += 1
            }
        }
        if header.hasAlpha {
            j = 0
            for cy in 0..<5 {
                var cx = cy > 0 ? 0 : 1
                let fy2 = fy[cy] * 2
                while cx < 5 - cy {
                    a += ac.a[j] * fx[cx] * fy2
                    cx += 1
                    j += 1
                }
            }
        }
        return (l, p, q, a)
    }

    /// Decodes base64 (as `/info` sends it).
    public init?(base64: String) {
        guard let data = Data(base64Encoded: base64) else { return nil }
        self.init(hash: [UInt8](data))
    }

    /// The width / height the hash holds: coarse (its L components' counts), enough to
    /// tell landscape from portrait; `/info`'s `ratio` is exact.
    public static func approximateRatio(hash: [UInt8]) -> Double? {
        guard hash.count >= 5 else { return nil }
        let hasAlpha = hash[2] & 0x80 != 0
        let isLandscape = hash[4] & 0x80 != 0
        let lx = isLandscape ? (hasAlpha ? 5 : 7) : Int(hash[3] & 7)
        let ly = isLandscape ? Int(hash[3] & 7) : (hasAlpha ? 5 : 7)
        guard lx > 0, ly > 0 else { return nil }
        return Double(lx) / Double(ly)
    }

    /// The mean colour of the decoded pixels, weighted by alpha, 0 … 255.
    public var averageColor: (red: Double, green: Double, blue: Double) {
        var (r, g, b, a) = (0.0, 0.0, 0.0, 0.0)
        for i in stride(from: 0, to: rgba.count, by: 4) {
            let w = Double(rgba[i + 3]) / 255
            r += Double(rgba[i]) * w
            g += Double(rgba[i + 1]) * w
            b += Double(rgba[i + 2]) * w
            a += w
        }
        return a > 0 ? (r / a, g / a, b / a) : (0, 0, 0)
    }
}
