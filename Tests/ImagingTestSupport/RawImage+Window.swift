import Imaging

extension RawImage {
    /// Where `self`, a window cut from a picture, sits in `whole` (the same picture at the
    /// same scale): the offset whose pixels differ least from the window's, compared on a
    /// grid of every `step`th pixel. How a test reads the cut off the answer's pixels alone,
    /// through the binary, without the plan.
    public func offset(in whole: RawImage, step: Int = 4) -> (x: Int, y: Int, meanDifference: Double) {
        var best = (x: 0, y: 0, meanDifference: Double.infinity)
        guard whole.width >= width, whole.height >= height else { return best }
        let channels = min(3, bands, whole.bands)
        for oy in 0...(whole.height - height) {
            for ox in 0...(whole.width - width) {
                var sum = 0
                var count = 0
                for y in stride(from: 0, to: height, by: step) {
                    for x in stride(from: 0, to: width, by: step) {
                        let a = (y * width + x) * bands
                        let b = ((y + oy) * whole.width + x + ox) * whole.bands
                        for k in 0..<channels { sum += abs(Int(pixels[a + k]) - Int(whole.pixels[b + k])) }
                        count += channels
                    }
                }
                let mean = Double(sum) / Double(max(1, count))
                if mean < best.meanDifference { best = (ox, oy, mean) }
            }
        }
        return best
    }

    /// The picture turned `quarters` quarter turns clockwise.
    public func turned(quarters: Int) -> RawImage {
        var image = self
        for _ in 0..<((quarters % 4 + 4) % 4) {
            var out = [UInt8](repeating: 0, count: image.pixels.count)
            let (w, h, b) = (image.width, image.height, image.bands)
            for y in 0..<h {
                for x in 0..<w {
                    // (x, y) goes to (h − 1 − y, x) in a w-tall, h-wide image.
                    let dst = (x * h + (h - 1 - y)) * b
                    let src = (y * w + x) * b
                    for k in 0..<b { out[dst + k] = image.pixels[src + k] }
                }
            }
            image = RawImage(width: h, height: w, bands: b, pixels: out)
        }
        return image
    }

    /// The picture mirrored left to right.
    public func mirrored() -> RawImage {
        var out = pixels
        for y in 0..<height {
            for x in 0..<width {
                let (dst, src) = ((y * width + x) * bands, (y * width + width - 1 - x) * bands)
                for k in 0..<bands { out[dst + k] = pixels[src + k] }
            }
        }
        return RawImage(width: width, height: height, bands: bands, pixels: out)
    }

    /// The pixels a camera stores for this upright picture under EXIF `orientation`: the
    /// inverse of what a viewer applies to show them (2 mirrors, 3 turns half, 4 flips,
    /// 5 transposes, 6 turns a quarter clockwise, 7 transverses, 8 a quarter counter-clockwise).
    public func stored(orientation: Int) -> RawImage {
        switch orientation {
        case 2: mirrored()
        case 3: turned(quarters: 2)
        case 4: mirrored().turned(quarters: 2)
        case 5: turned(quarters: 1).mirrored()
        case 6: turned(quarters: 3)
        case 7: mirrored().turned(quarters: 1)
        case 8: turned(quarters: 1)
        default: self
        }
    }
}
