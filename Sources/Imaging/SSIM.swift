import CVips
import Core

/// SSIM of luma (Wang, Bovik, Sheikh and Simoncelli, "Image quality assessment: from error
/// visibility to structural similarity", IEEE TIP 2004): the mean over every 8×8 window,
/// sliding a pixel at a time, of
/// `(2μxμy + C1)(2σxy + C2) / ((μx² + μy² + C1)(σx² + σy² + C2))`, with `C1 = (0.01·255)²`
/// and `C2 = (0.03·255)²`. The windows' sums are kept running: each row of windows from
/// the last by the row that enters and the row that leaves, each window from its
/// neighbour by the column that enters and the one that leaves; a few passes over the
/// pixels, in a working set of five rows.
struct LumaSSIM {
    static let window = 8
    static let c1 = (0.01 * 255.0) * (0.01 * 255.0)
    static let c2 = (0.03 * 255.0) * (0.03 * 255.0)

    let width: Int
    let height: Int
    /// The reference's luma, made once for every comparison with it.
    let luma: [Double]

    /// `pixels`: 8-bit sRGB, `bands` bytes a pixel (an alpha band is ignored).
    init(pixels: [UInt8], width: Int, height: Int, bands: Int) {
        self.width = width
        self.height = height
        luma = Self.luma(pixels, count: width * height, bands: bands)
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

    /// The SSIM of another image of the same size against this one; nil for another size.
    func compare(pixels: [UInt8], bands: Int) -> Double? {
        guard pixels.count == width * height * bands else { return nil }
        let other = Self.luma(pixels, count: width * height, bands: bands)
        let (w, h) = (min(Self.window, width), min(Self.window, height))
        let n = Double(w * h)
        // Per column, the sums over the window's rows: x, y, x², y², xy.
        var columns = [Double](repeating: 0, count: 5 * width)
        var total = 0.0
        luma.withUnsafeBufferPointer { x in
            other.withUnsafeBufferPointer { y in
                columns.withUnsafeMutableBufferPointer { c in
                    func add(row: Int, sign: Double) {
                        let base = row * width
                        for i in 0..<width {
                            let (u, v) = (x[base + i], y[base + i])
                            c[i] += sign * u
                            c[width + i] += sign * v
                            c[2 * width + i] += sign * u * u
                            c[3 * width + i] += sign * v * v
                            c[4 * width + i] += sign * u * v
                        }
                    }
                    for row in 0..<h { add(row: row, sign: 1) }
                    for top in 0...(height - h) {
                        if top > 0 {
                            add(row: top - 1, sign: -1)
                            add(row: top + h - 1, sign: 1)
                        }
                        var (sx, sy, sxx, syy, sxy) = (0.0, 0.0, 0.0, 0.0, 0.0)
                        for i in 0..<w {
                            sx += c[i]
                            sy += c[width + i]
                            sxx += c[2 * width + i]
                            syy += c[3 * width + i]
                            sxy += c[4 * width + i]
                        }
                        for left in 0...(width - w) {
                            if left > 0 {
                                let (enter, leave) = (left + w - 1, left - 1)
                                sx += c[enter] - c[leave]
                                sy += c[width + enter] - c[width + leave]
                                sxx += c[2 * width + enter] - c[2 * width + leave]
                                syy += c[3 * width + enter] - c[3 * width + leave]
                                sxy += c[4 * width + enter] - c[4 * width + leave]
                            }
                            let (mx, my) = (sx / n, sy / n)
                            let (vx, vy, cxy) = (sxx / n - mx * mx, syy / n - my * my, sxy / n - mx * my)
                            total +=
                                ((2 * mx * my + Self.c1) * (2 * cxy + Self.c2))
                                / ((mx * mx + my * my + Self.c1) * (vx + vy + Self.c2))
                        }
                    }
                }
            }
        }
        return total / Double((width - w + 1) * (height - h + 1))
    }
}

/// The measure `q=auto` uses, for tools (bench/quality.sh): SSIM of the luma of two
/// encoded images of one size.
public enum Similarity {
    public static func lumaSSIM(reference: [UInt8], candidate: [UInt8]) throws(ImagingError) -> Double {
        try Vips.start()
        func decoded(_ bytes: [UInt8]) throws(ImagingError) -> VImage {
            let image = try VImage.make(.decode, AspectError(.unsupportedSource, "the image cannot be decoded")) {
                out in bytes.withUnsafeBytes { raw in cvips_load_buffer(raw.baseAddress, raw.count, out, 0) }
            }
            return try Pipeline.toSRGB(image)
        }
        let (a, b) = (try decoded(reference), try decoded(candidate))
        let measure = LumaSSIM(pixels: try a.pixels(), width: a.width, height: a.height, bands: a.bands)
        guard let score = measure.compare(pixels: try b.pixels(), bands: b.bands) else {
            throw ImagingError(.process, AspectError(.badParam, "the two images differ in size: \(a.size), \(b.size)"))
        }
        return score
    }
}
