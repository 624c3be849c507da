/// The coverage mask of a clip shape: one byte per pixel, 255 inside, 0 outside, and
/// in between along the edge, by how much of the pixel the shape covers (antialiased
/// from the signed distance of the pixel's centre to the shape's edge).
public enum ShapeMask {
    /// The mask of `shape` over an image of `size` with corner radius `radius` (as
    /// `Plan.cornerRadius`), row by row.
    public static func coverage(size: Size, shape: Shape, radius: Double) -> [UInt8] {
        let w = Double(size.width)
        let h = Double(size.height)
        // The shape's rectangle: the whole image, or for a circle the centred square.
        let side = min(w, h)
        let (rw, rh) = shape == .circle ? (side, side) : (w, h)
        let r = max(0, min(radius, min(rw, rh) / 2))
        let cx = w / 2
        let cy = h / 2
        let innerX = rw / 2 - r
        let innerY = rh / 2 - r
        var mask = [UInt8](repeating: 0, count: size.width * size.height)
        mask.withUnsafeMutableBufferPointer { out in
            for y in 0..<size.height {
                let qy = abs(Double(y) + 0.5 - cy) - innerY
                let row = y * size.width
                for x in 0..<size.width {
                    let qx = abs(Double(x) + 0.5 - cx) - innerX
                    // Signed distance to a rounded rectangle: negative inside.
                    let d: Double
                    if qx <= 0 || qy <= 0 {
                        d = max(qx, qy) - r
                    } else {
                        d = (qx * qx + qy * qy).squareRoot() - r
                    }
                    let c = 0.5 - d
                    out[row + x] = c >= 1 ? 255 : (c <= 0 ? 0 : UInt8((c * 255).rounded()))
                }
            }
        }
        return mask
    }
}
