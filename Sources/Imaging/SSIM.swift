import CVips
import Core

/// SSIM of luma (Wang, Bovik, Sheikh and Simoncelli, "Image quality assessment: from error
/// visibility to structural similarity", IEEE TIP 2004) as x264 and FFmpeg's `ssim` filter
/// measure it: 8×8 windows on a 4-pixel grid, each overlapping its neighbours by half, and
/// the mean over them of
/// `(2μxμy + C1)(2σxy + C2) / ((μx² + μy² + C1)(σx² + σy² + C2))`, with `C1 = (0.01·255)²`
/// and `C2 = (0.03·255)²`. Luma is BT.601's `Y = 0.299 R + 0.587 G + 0.114 B` of the
/// gamma-encoded values, kept ×1000 as an integer so every sum is exact. Each 4×4 block's
/// sums are made in one pass over the pixels and a window adds its four blocks'; the
/// reference's own sums are made once for every comparison with it. Pixels past the last
/// whole block on the right and at the bottom fall outside every window, as in x264; an
/// image under 8 pixels on a side is one window, all of it.
struct LumaSSIM {
    static let c1 = (0.01 * 255.0) * (0.01 * 255.0)
    static let c2 = (0.03 * 255.0) * (0.03 * 255.0)

    let width: Int
    let height: Int
    /// The reference's luma ×1000.
    let luma: [Int32]
    /// Per 4×4 block, row by row: the reference's Σx and Σx².
    private let blocks: [Int64]

    /// `pixels`: 8-bit sRGB, `bands` bytes a pixel (an alpha band is ignored).
    init(pixels: [UInt8], width: Int, height: Int, bands: Int) {
        self.width = width
        self.height = height
        luma = Self.luma(pixels, count: width * height, bands: bands)
        let (bw, bh) = (width / 4, height / 4)
        var blocks = [Int64](repeating: 0, count: 2 * bw * bh)
        luma.withUnsafeBufferPointer { x in
            blocks.withUnsafeMutableBufferPointer { b in
                for row in 0..<(bh * 4) {
                    let (base, out) = (row * width, (row / 4) * bw * 2)
                    for i in 0..<(bw * 4) {
                        let u = Int64(x[base + i])
                        b[out + (i / 4) * 2] += u
                        b[out + (i / 4) * 2 + 1] += u * u
                    }
                }
            }
        }
        self.blocks = blocks
    }

    /// BT.601 luma ×1000 (`299 R + 587 G + 114 B`), or 1000 × a grey band.
    static func luma(_ pixels: [UInt8], count: Int, bands: Int) -> [Int32] {
        var out = [Int32](repeating: 0, count: count)
        pixels.withUnsafeBufferPointer { p in
            out.withUnsafeMutableBufferPointer { y in
                if bands >= 3 {
                    for i in 0..<count {
                        let o = i * bands
                        y[i] = 299 * Int32(p[o]) + 587 * Int32(p[o + 1]) + 114 * Int32(p[o + 2])
                    }
                } else {
                    for i in 0..<count { y[i] = 1000 * Int32(p[i * bands]) }
                }
            }
        }
        return out
    }

    /// One window's SSIM from its sums over `n` pixels of luma ×1000.
    @inline(__always)
    static func window(n: Double, sx: Int64, sy: Int64, sxx: Int64, syy: Int64, sxy: Int64) -> Double {
        let (mx, my) = (Double(sx) / (n * 1000), Double(sy) / (n * 1000))
        let (vx, vy) = (Double(sxx) / (n * 1_000_000) - mx * mx, Double(syy) / (n * 1_000_000) - my * my)
        let cxy = Double(sxy) / (n * 1_000_000) - mx * my
        return ((2 * mx * my + c1) * (2 * cxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
    }

    /// The SSIM of another image of the same size against this one; nil for another size.
    func compare(pixels: [UInt8], bands: Int) -> Double? {
        guard pixels.count == width * height * bands else { return nil }
        let other = Self.luma(pixels, count: width * height, bands: bands)
        guard width >= 8, height >= 8 else { return whole(other) }
        let (bw, bh) = (width / 4, height / 4)
        // The candidate's Σy, Σy² and Σxy per block, for the block row above and this one.
        var above = [Int64](repeating: 0, count: 3 * bw)
        var current = [Int64](repeating: 0, count: 3 * bw)
        var total = 0.0
        luma.withUnsafeBufferPointer { x in
            other.withUnsafeBufferPointer { y in
                blocks.withUnsafeBufferPointer { ref in
                    for by in 0..<bh {
                        current.withUnsafeMutableBufferPointer { c in
                            for k in 0..<c.count { c[k] = 0 }
                            for row in (by * 4)..<(by * 4 + 4) {
                                let base = row * width
                                for i in 0..<(bw * 4) {
                                    let (u, v) = (Int64(x[base + i]), Int64(y[base + i]))
                                    let o = (i / 4) * 3
                                    c[o] += v
                                    c[o + 1] += v * v
                                    c[o + 2] += u * v
                                }
                            }
                        }
                        if by > 0 {
                            above.withUnsafeBufferPointer { a in
                                current.withUnsafeBufferPointer { c in
                                    let (r0, r1) = ((by - 1) * bw * 2, by * bw * 2)
                                    for bx in 0..<(bw - 1) {
                                        let (o, p) = (bx * 3, bx * 2)
                                        func sum(_ b: UnsafeBufferPointer<Int64>, _ at: Int, _ k: Int, _ step: Int)
                                            -> Int64
                                        {
                                            b[at + k] + b[at + step + k]
                                        }
                                        let sx = sum(ref, r0 + p, 0, 2) + sum(ref, r1 + p, 0, 2)
                                        let sxx = sum(ref, r0 + p, 1, 2) + sum(ref, r1 + p, 1, 2)
                                        let sy = sum(a, o, 0, 3) + sum(c, o, 0, 3)
                                        let syy = sum(a, o, 1, 3) + sum(c, o, 1, 3)
                                        let sxy = sum(a, o, 2, 3) + sum(c, o, 2, 3)
                                        total += Self.window(n: 64, sx: sx, sy: sy, sxx: sxx, syy: syy, sxy: sxy)
                                    }
                                }
                            }
                        }
                        swap(&above, &current)
                    }
                }
            }
        }
        return total / Double((bw - 1) * (bh - 1))
    }

    /// An image under 8 pixels on a side: one window of every pixel.
    private func whole(_ other: [Int32]) -> Double {
        var (sx, sy, sxx, syy, sxy): (Int64, Int64, Int64, Int64, Int64) = (0, 0, 0, 0, 0)
        for i in 0..<(width * height) {
            let (u, v) = (Int64(luma[i]), Int64(other[i]))
            sx += u
            sy += v
            sxx += u * u
            syy += v * v
            sxy += u * v
        }
        return Self.window(n: Double(width * height), sx: sx, sy: sy, sxx: sxx, syy: syy, sxy: sxy)
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
