/// SSIM of luma (Wang, Bovik, Sheikh and Simoncelli, "Image quality assessment: from error
/// visibility to structural similarity", IEEE TIP 2004): the mean over every 8×8 window,
/// sliding a pixel at a time, of
/// `(2μxμy + C1)(2σxy + C2) / ((μx² + μy² + C1)(σx² + σy² + C2))`, with `C1 = (0.01·255)²`
/// and `C2 = (0.03·255)²`. The windows' sums come from summed-area tables, so the cost is
/// a few passes over the pixels whatever the window.
struct LumaSSIM {
    static let window = 8
    static let c1 = (0.01 * 255.0) * (0.01 * 255.0)
    static let c2 = (0.03 * 255.0) * (0.03 * 255.0)

    let width: Int
    let height: Int
    /// The reference's luma and the summed-area tables of it and its square, made once.
    let luma: [Double]
    let sum: [Double]
    let squares: [Double]

    /// `pixels`: 8-bit sRGB, `bands` bytes a pixel (an alpha band is ignored).
    init(pixels: [UInt8], width: Int, height: Int, bands: Int) {
        self.width = width
        self.height = height
        luma = Self.luma(pixels, count: width * height, bands: bands)
        sum = Self.table(luma, width, height) { $0 }
        squares = Self.table(luma, width, height) { $0 * $0 }
    }

    /// BT.601 luma, `Y = 0.299 R + 0.587 G + 0.114 B`, of the gamma-encoded values.
    static func luma(_ pixels: [UInt8], count: Int, bands: Int) -> [Double] {
        var out = [Double](repeating: 0, count: count)
        pixels.withUnsafeBufferPointer { p in
            out.withUnsafeMutableBufferPointer { y in
                if bands >= 3 {
                    for i in 0..<count {
                        let o = i * bands
                        y[i] = 0.299 * Double(p[o]) + 0.587 * Double(p[o + 1]) + 0.114 * Double(p[o + 2])
                    }
                } else {
                    for i in 0..<count { y[i] = Double(p[i * bands]) }
                }
            }
        }
        return out
    }

    /// A summed-area table of `f` of each value: `(width + 1) × (height + 1)`, a zero row and column first.
    static func table(_ v: [Double], _ width: Int, _ height: Int, _ f: (Double) -> Double) -> [Double] {
        let stride = width + 1
        var t = [Double](repeating: 0, count: stride * (height + 1))
        v.withUnsafeBufferPointer { v in
            t.withUnsafeMutableBufferPointer { t in
                for y in 0..<height {
                    var row = 0.0
                    for x in 0..<width {
                        row += f(v[y * width + x])
                        t[(y + 1) * stride + x + 1] = t[y * stride + x + 1] + row
                    }
                }
            }
        }
        return t
    }

    /// The SSIM of another image of the same size against this one; nil for another size.
    func compare(pixels: [UInt8], bands: Int) -> Double? {
        guard pixels.count == width * height * bands else { return nil }
        let other = Self.luma(pixels, count: width * height, bands: bands)
        let sumY = Self.table(other, width, height) { $0 }
        let squaresY = Self.table(other, width, height) { $0 * $0 }
        var product = [Double](repeating: 0, count: other.count)
        for i in 0..<other.count { product[i] = luma[i] * other[i] }
        let products = Self.table(product, width, height) { $0 }
        let (w, h) = (min(Self.window, width), min(Self.window, height))
        let n = Double(w * h)
        let stride = width + 1
        var total = 0.0
        sum.withUnsafeBufferPointer { sx in
            squares.withUnsafeBufferPointer { qx in
                sumY.withUnsafeBufferPointer { sy in
                    squaresY.withUnsafeBufferPointer { qy in
                        products.withUnsafeBufferPointer { pxy in
                            for y in 0...(height - h) {
                                let top = y * stride
                                let bottom = (y + h) * stride
                                for x in 0...(width - w) {
                                    let (a, b, c, d) = (bottom + x + w, top + x + w, bottom + x, top + x)
                                    let mx = (sx[a] - sx[b] - sx[c] + sx[d]) / n
                                    let my = (sy[a] - sy[b] - sy[c] + sy[d]) / n
                                    let vx = (qx[a] - qx[b] - qx[c] + qx[d]) / n - mx * mx
                                    let vy = (qy[a] - qy[b] - qy[c] + qy[d]) / n - my * my
                                    let cxy = (pxy[a] - pxy[b] - pxy[c] + pxy[d]) / n - mx * my
                                    total +=
                                        ((2 * mx * my + Self.c1) * (2 * cxy + Self.c2))
                                        / ((mx * mx + my * my + Self.c1) * (vx + vy + Self.c2))
                                }
                            }
                        }
                    }
                }
            }
        }
        return total / Double((width - w + 1) * (height - h + 1))
    }
}
