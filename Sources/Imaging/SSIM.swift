internal import CVips
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

    /// The reference for a picture in memory (8-bit sRGB).
    init(_ image: VImage) throws(ImagingError) {
        self.init(pixels: try image.pixels(), width: image.width, height: image.height, bands: image.bands)
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
        pixels.withUnsafeBytes { compare(pixels: $0, bands: bands) }
    }

    /// The same, on pixels lent (libvips' own buffer): the candidate's luma is made as its
    /// blocks are summed, never stored.
    func compare(pixels: UnsafeRawBufferPointer, bands: Int) -> Double? {
        guard pixels.count == width * height * bands, let p = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self)
        else { return nil }
        guard width >= 8, height >= 8 else {
            return whole(Self.luma(Array(pixels), count: width * height, bands: bands))
        }
        let (bw, bh) = (width / 4, height / 4)
        // The candidate's Σy, Σy² and Σxy per block, for the block row above and this one.
        var above = [Int64](repeating: 0, count: 3 * bw)
        var current = [Int64](repeating: 0, count: 3 * bw)
        var total = 0.0
        luma.withUnsafeBufferPointer { x in
            blocks.withUnsafeBufferPointer { ref in
                for by in 0..<bh {
                    current.withUnsafeMutableBufferPointer { c in
                        for k in 0..<c.count { c[k] = 0 }
                        for row in (by * 4)..<(by * 4 + 4) {
                            let base = row * width
                            let line = p + base * bands
                            for bx in 0..<bw {
                                var (sy, syy, sxy): (Int64, Int64, Int64) = (0, 0, 0)
                                for k in 0..<4 {
                                    let i = bx * 4 + k
                                    let o = i * bands
                                    let v =
                                        bands >= 3
                                        ? Int64(
                                            299 * Int32(line[o]) + 587 * Int32(line[o + 1]) + 114 * Int32(line[o + 2]))
                                        : 1000 * Int64(line[o])
                                    let u = Int64(x[base + i])
                                    sy += v
                                    syy += v * v
                                    sxy += u * v
                                }
                                c[bx * 3] += sy
                                c[bx * 3 + 1] += syy
                                c[bx * 3 + 2] += sxy
                            }
                        }
                    }
                    if by > 0 {
                        above.withUnsafeBufferPointer { a in
                            current.withUnsafeBufferPointer { c in
                                let (r0, r1) = ((by - 1) * bw * 2, by * bw * 2)
                                for bx in 0..<(bw - 1) {
                                    let (o, q) = (bx * 3, bx * 2)
                                    let sx = ref[r0 + q] + ref[r0 + q + 2] + ref[r1 + q] + ref[r1 + q + 2]
                                    let sxx = ref[r0 + q + 1] + ref[r0 + q + 3] + ref[r1 + q + 1] + ref[r1 + q + 3]
                                    let sy = a[o] + a[o + 3] + c[o] + c[o + 3]
                                    let syy = a[o + 1] + a[o + 4] + c[o + 1] + c[o + 4]
                                    let sxy = a[o + 2] + a[o + 5] + c[o + 2] + c[o + 5]
                                    total += Self.window(n: 64, sx: sx, sy: sy, sxx: sxx, syy: syy, sxy: sxy)
                                }
                            }
                        }
                    }
                    swap(&above, &current)
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
    static func decoded(_ bytes: [UInt8]) throws(ImagingError) -> VImage {
        let image = try VImage.make(.decode, AspectError(.unsupportedSource, "the image cannot be decoded")) {
            out in bytes.withUnsafeBytes { raw in cvips_load_buffer(raw.baseAddress, raw.count, out, 0) }
        }
        return try Pipeline.toSRGB(image)
    }

    public static func lumaSSIM(reference: [UInt8], candidate: [UInt8]) throws(ImagingError) -> Double {
        try Vips.start()
        let (a, b) = (try decoded(reference), try decoded(candidate))
        let measure = LumaSSIM(pixels: try a.pixels(), width: a.width, height: a.height, bands: a.bands)
        guard let score = measure.compare(pixels: try b.pixels(), bands: b.bands) else {
            throw ImagingError(.process, AspectError(.badParam, "the two images differ in size: \(a.size), \(b.size)"))
        }
        return score
    }

    /// The measure `q=auto` takes at every quality of `qualities`: `reference` (an image
    /// file of the unencoded result) encoded in `format` as the service encodes it, decoded
    /// again and compared; for tools (bench/quality.sh replays the search on it).
    public static func curve(reference: [UInt8], format: ImageFormat, qualities: ClosedRange<Int>)
        throws(ImagingError) -> [Int: Double]
    {
        try Vips.start()
        let image = try decoded(reference)
        let measure = LumaSSIM(pixels: try image.pixels(), width: image.width, height: image.height, bands: image.bands)
        var scores: [Int: Double] = [:]
        for q in qualities {
            let bytes = try Encoder.encode(image, format: format, quality: q)
            scores[q] = Encoder.ssim(of: bytes, format: format, against: measure, size: image.size)
        }
        return scores
    }
}
