import Foundation

/// Evan Wallace's ThumbHash (https://evanw.github.io/thumbhash/): a placeholder of about
/// 25 bytes that holds an image's colours, its rough shape, its alpha and its aspect ratio.
/// The encoder follows the published algorithm step for step, in the same order of
/// floating-point operations as the reference, with JavaScript's `Math.round` (half up).
public enum ThumbHash {
    /// The hash of an RGBA image (8 bits a channel, not premultiplied) of at most 100×100;
    /// nil for any other size, or pixels that are not that many.
    public static func encode(width w: Int, height h: Int, rgba: [UInt8]) -> [UInt8]? {
        guard w > 0, h > 0, w <= 100, h <= 100, rgba.count == w * h * 4 else { return nil }
        var avgR = 0.0
        var avgG = 0.0
        var avgB = 0.0
        var avgA = 0.0
        for i in 0..<(w * h) {
            let j = i * 4
            let alpha = Double(rgba[j + 3]) / 255
            avgR += alpha / 255 * Double(rgba[j])
            avgG += alpha / 255 * Double(rgba[j + 1])
            avgB += alpha / 255 * Double(rgba[j + 2])
            avgA += alpha
        }
        if avgA > 0 {
            avgR /= avgA
            avgG /= avgA
            avgB /= avgA
        }
        let hasAlpha = avgA < Double(w * h)
        let lLimit = hasAlpha ? 5.0 : 7.0
        let lx = max(1, jsRound(lLimit * Double(w) / Double(max(w, h))))
        let ly = max(1, jsRound(lLimit * Double(h) / Double(max(w, h))))
        var l = [Double]()
        var p = [Double]()
        var q = [Double]()
        var a = [Double]()
        l.reserveCapacity(w * h)
        for i in 0..<(w * h) {
            let j = i * 4
            let alpha = Double(rgba[j + 3]) / 255
            let r = avgR * (1 - alpha) + alpha / 255 * Double(rgba[j])
            let g = avgG * (1 - alpha) + alpha / 255 * Double(rgba[j + 1])
            let b = avgB * (1 - alpha) + alpha / 255 * Double(rgba[j + 2])
            l.append((r + g + b) / 3)
            p.append((r + g) / 2 - b)
            q.append(r - g)
            a.append(alpha)
        }

        func encodeChannel(_ channel: [Double], _ nx: Int, _ ny: Int) -> (dc: Double, ac: [Double], scale: Double) {
            var dc = 0.0
            var scale = 0.0
            var ac: [Double] = []
            var fx = [Double](repeating: 0, count: w)
            for cy in 0..<ny {
                var cx = 0
                while cx * ny < nx * (ny - cy) {
                    var f = 0.0
                    for x in 0..<w { fx[x] = cos(Double.pi / Double(w) * Double(cx) * (Double(x) + 0.5)) }
                    for y in 0..<h {
                        let fy = cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5))
                        for x in 0..<w { f += channel[x + y * w] * fx[x] * fy }
                    }
                    f /= Double(w * h)
                    if cx > 0 || cy > 0 {
                        ac.append(f)
                        scale = max(scale, abs(f))
                    } else {
                        dc = f
                    }
                    cx += 1
                }
            }
            if scale > 0 { for i in ac.indices { ac[i] = 0.5 + 0.5 / scale * ac[i] } }
            return (dc, ac, scale)
        }

        let (lDC, lAC, lScale) = encodeChannel(l, max(3, lx), max(3, ly))
        let (pDC, pAC, pScale) = encodeChannel(p, 3, 3)
        let (qDC, qAC, qScale) = encodeChannel(q, 3, 3)
        let (aDC, aAC, aScale) = hasAlpha ? encodeChannel(a, 5, 5) : (1.0, [], 1.0)
        let isLandscape = w > h
        let header24 =
            jsRound(63 * lDC) | (jsRound(31.5 + 31.5 * pDC) << 6) | (jsRound(31.5 + 31.5 * qDC) << 12)
            | (jsRound(31 * lScale) << 18) | (hasAlpha ? 1 << 23 : 0)
        let header16 =
            (isLandscape ? ly : lx) | (jsRound(63 * pScale) << 3) | (jsRound(63 * qScale) << 9)
            | (isLandscape ? 1 << 15 : 0)
        var hash: [UInt8] = [
            UInt8(header24 & 255), UInt8((header24 >> 8) & 255), UInt8(header24 >> 16), UInt8(header16 & 255),
            UInt8(header16 >> 8),
        ]
        if hasAlpha { hash.append(UInt8(jsRound(15 * aDC) | (jsRound(15 * aScale) << 4))) }
        var isOdd = false
        for f in lAC + pAC + qAC + aAC {
            let u = UInt8(jsRound(15 * f))
            if isOdd { hash[hash.count - 1] |= u << 4 } else { hash.append(u) }
            isOdd.toggle()
        }
        return hash
    }

    /// JavaScript's `Math.round`: halves go up.
    static func jsRound(_ x: Double) -> Int { Int((x + 0.5).rounded(.down)) }
}
