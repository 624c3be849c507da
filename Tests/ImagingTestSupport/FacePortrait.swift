import Core
import Imaging

/// A portrait with its face off-centre, made from matplotlib's grace_hopper.jpg (fetched by
/// scripts/fetch-faces.sh), for the face cut's tests in every EXIF orientation.
public enum FacePortrait {
    /// Grace Hopper's face in grace_hopper.jpg (512×600), marked by hand, as fractions.
    public static let hopper = FaceBox(x: 0.316, y: 0.277, w: 0.379, h: 0.267)

    /// A 983×1600 portrait as a user's was: Grace Hopper enlarged to 569×667 at the top
    /// left of a grey canvas, her face 178 pixels high (rows 185–363), far from the middle
    /// a centre or smart cut keeps: 71 pixels on the 640-pixel copy faces are found on, 46
    /// on a 256-wide cut's own decode. `width` sets her size, `size` the canvas's.
    /// The picture, upright, and where the face is in it.
    public static func make(hopper path: String, width: Int = 569, size: Size = Size(width: 983, height: 1600))
        throws -> (picture: RawImage, face: FaceBox)
    {
        var request = ThumbRequest(src: "grace_hopper.jpg")
        (request.width, request.upscale, request.format) = (width, true, .png)
        let rendered = try Thumbnailer(limits: ImagingLimits()).thumbnail(
            path: path, request: request, requestLimits: RequestLimits())
        let b = try ImageFile.decode(rendered.bytes)
        var canvas = RawImage(
            width: size.width, height: size.height, bands: 3,
            pixels: [UInt8](repeating: 128, count: size.width * size.height * 3))
        for y in 0..<b.height {
            for x in 0..<b.width {
                for k in 0..<3 {
                    canvas.pixels[(y * size.width + x) * 3 + k] =
                        b.pixels[(y * b.width + x) * b.bands + min(k, b.bands - 1)]
                }
            }
        }
        let (sx, sy) = (Double(b.width) / Double(size.width), Double(b.height) / Double(size.height))
        return (canvas, FaceBox(x: hopper.x * sx, y: hopper.y * sy, w: hopper.w * sx, h: hopper.h * sy))
    }
}
