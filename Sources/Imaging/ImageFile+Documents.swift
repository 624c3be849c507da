internal import CAV
import Core
import Foundation

extension ImageFile {
    /// A page of a document `pdf(pages:)` writes: its size in points and a fill colour
    /// for all of it, with an optional band of a second colour across its middle third.
    public struct Page: Sendable {
        public var width: Int
        public var height: Int
        public var rgb: (UInt8, UInt8, UInt8)
        public var band: (UInt8, UInt8, UInt8)?

        public init(width: Int, height: Int, rgb: (UInt8, UInt8, UInt8), band: (UInt8, UInt8, UInt8)? = nil) {
            self.width = width
            self.height = height
            self.rgb = rgb
            self.band = band
        }
    }

    /// A PDF of flat-coloured pages, written out by hand (objects, cross-reference table,
    /// trailer): the samples' and the tests' documents, with no PDF writer needed.
    public static func pdf(pages: [Page]) -> [UInt8] {
        var out = "%PDF-1.4\n"
        var offsets: [Int] = []
        func object(_ body: String) {
            offsets.append(out.utf8.count)
            out += "\(offsets.count) 0 obj\n\(body)\nendobj\n"
        }
        let kids = pages.indices.map { "\(3 + 2 * $0) 0 R" }.joined(separator: " ")
        object("<< /Type /Catalog /Pages 2 0 R >>")
        object("<< /Type /Pages /Kids [\(kids)] /Count \(pages.count) >>")
        func colour(_ c: (UInt8, UInt8, UInt8)) -> String {
            [c.0, c.1, c.2].map { String(format: "%.4f", Double($0) / 255) }.joined(separator: " ")
        }
        for (i, page) in pages.enumerated() {
            var drawing = "\(colour(page.rgb)) rg 0 0 \(page.width) \(page.height) re f\n"
            if let band = page.band {
                drawing += "\(colour(band)) rg 0 \(page.height / 3) \(page.width) \(page.height / 3) re f\n"
            }
            object(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 \(page.width) \(page.height)] /Contents \(4 + 2 * i) 0 R >>"
            )
            object("<< /Length \(drawing.utf8.count) >>\nstream\n\(drawing)endstream")
        }
        let table = out.utf8.count
        out += "xref\n0 \(offsets.count + 1)\n0000000000 65535 f \n"
        for o in offsets { out += String(format: "%010d 00000 n \n", o) }
        out += "trailer\n<< /Size \(offsets.count + 1) /Root 1 0 R >>\nstartxref\n\(table)\n%%EOF\n"
        return Array(out.utf8)
    }
}

extension ImageFile {
    /// The encoders `writeClip` can use, by FFmpeg's names.
    public enum VideoCodec: String, Sendable {
        case h264 = "libx264"
        case vp9 = "libvpx-vp9"
        case mpeg4
    }

    /// Writes a clip of `frames` (RGB, all one even size) at `fps`, a keyframe every
    /// `keyframeEvery` frames, turned `rotation` degrees clockwise by its display matrix;
    /// the container from the path's extension (`.mp4`, `.mov`, `.webm`, `.mkv`). By
    /// FFmpeg's own encoders: the samples' clip and the tests'.
    public static func writeClip(
        to path: String, frames: [RawImage], fps: Int, codec: VideoCodec, keyframeEvery: Int, rotation: Int = 0
    ) throws(ImagingError) {
        guard let first = frames.first, frames.allSatisfy({ $0.width == first.width && $0.height == first.height })
        else {
            throw ImagingError(.encode, AspectError(.internalError, "a clip needs frames of one size"))
        }
        let rgb = frames.flatMap { frame in
            frame.bands == 3
                ? frame.pixels
                : stride(from: 0, to: frame.pixels.count, by: frame.bands).flatMap {
                    frame.pixels[$0..<$0 + 3]
                }
        }
        let status = cav_write_clip(
            path, codec.rawValue, rgb, Int32(frames.count), Int32(first.width), Int32(first.height), Int32(fps),
            Int32(keyframeEvery), Int32(rotation))
        guard status == 0 else {
            throw ImagingError(.encode, AspectError(.internalError, "writing the clip \(path) failed"))
        }
    }
}
