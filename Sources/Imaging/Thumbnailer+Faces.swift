internal import CFaces
internal import CVips
import Core

// Faces (SPEC: Faces): found by dlib's frontal face detector on a copy of the upright
// picture at most `Faces.detectionSide` pixels long, and where that finds none (with
// `faces.upsample`) on the same copy scaled up twice.
extension Thumbnailer {
    /// The detector's score a face must pass: above dlib's 0, which on the test photos
    /// also scored a fold of a sleeve (0.12) while the faces scored 0.6 to 1.3.
    static let faceMinScore = 0.3

    /// The faces in the picture `info` describes (after its trim, upright), found on a copy
    /// at most `Faces.detectionSide` long: `/info`'s, and an animation's or a video's cut.
    func findFaces(_ input: SourceInput, _ info: SourceInfo, deadline: Deadline) throws(ImagingError) -> [FaceBox] {
        let size = Self.fitting(info.size, Faces.detectionSide)
        let image = try decodeResized(input, info, to: size, fastShrink: true, deadline: deadline)
        return try detectFaces(try Pipeline.exactSize(image, size), deadline: deadline)
    }

    /// A still `gravity=face` fill's plan once the faces are known (SPEC: Faces), found on
    /// the render's own decode (`resized`, the plan's source scaled: no second decode)
    /// shrunk to `Faces.detectionSide` when it is at least that long; for a smaller
    /// render, on a copy of the source of its own at that size. So the cut looks where
    /// `/info` looks: a 256-wide cut of a 983×1600 portrait decodes 256×417, where a face
    /// 71 pixels high on the 640-pixel copy is 46 and was missed (issue 50).
    func centredOnFaces(_ resized: VImage, _ input: SourceInput, _ info: SourceInfo, _ plan: Plan, deadline: Deadline)
        throws(ImagingError) -> Plan
    {
        guard max(resized.width, resized.height) >= Faces.detectionSide else {
            return plan.centred(onFaces: try findFaces(input, info, deadline: deadline))
        }
        let size = Self.fitting(resized.size, Faces.detectionSide)
        let copy = try resized.then("faces") {
            cvips_thumbnail_image_force($0, $1, Int32(size.width), Int32(size.height))
        }
        return plan.centred(onFaces: try detectFaces(copy, deadline: deadline), inResized: true)
    }

    /// `size` shrunk to fit `side` × `side` (never enlarged).
    static func fitting(_ size: Size, _ side: Int) -> Size {
        let scale = min(1, Double(side) / Double(max(1, max(size.width, size.height))))
        return Size(
            width: max(1, Int((Double(size.width) * scale).rounded())),
            height: max(1, Int((Double(size.height) * scale).rounded())))
    }

    /// The faces in `image`, as fractions of its width and height, the surest first: a
    /// first look, and where it finds none and `limits.faceUpsample` is on, a second on
    /// the copy scaled up twice by dlib's `pyramid_up` (its window is 80×80: this finds
    /// faces down to about 40 pixels, at about four times the first look's cost).
    func detectFaces(_ decoded: VImage, deadline: Deadline) throws(ImagingError) -> [FaceBox] {
        var image = try Pipeline.toSRGB(decoded)
        if image.bands > 3 { image = try image.then("faces") { cvips_extract_band($0, $1, 0, 3) } }
        try deadline.check()
        let (width, height) = (image.width, image.height)
        let rgb = try image.pixels()
        guard rgb.count == width * height * 3 else {
            throw ImagingError(
                .process, AspectError(.internalError, "finding faces failed"),
                detail: "a copy of \(width)×\(height) with \(rgb.count) bytes")
        }
        var boxes = [cfaces_box](repeating: cfaces_box(), count: Faces.most)
        func look(upsample: Int32) -> Int32 {
            rgb.withUnsafeBufferPointer { pixels in
                cfaces_detect(
                    pixels.baseAddress, Int32(width), Int32(height), Int32(width * 3), upsample, Self.faceMinScore,
                    &boxes, Int32(Faces.most))
            }
        }
        var found = look(upsample: 0)
        if found == 0, limits.faceUpsample {
            try deadline.check()
            found = look(upsample: 1)
        }
        guard found >= 0 else {
            throw ImagingError(
                .process, AspectError(.internalError, "finding faces failed"), detail: "the detector failed")
        }
        let (w, h) = (Double(width), Double(height))
        return boxes.prefix(Int(min(found, Int32(Faces.most)))).map { b in
            let x = min(max(0, Double(b.x)), w)
            let y = min(max(0, Double(b.y)), h)
            return FaceBox(
                x: x / w, y: y / h, w: (min(w, Double(b.x + b.width)) - x) / w,
                h: (min(h, Double(b.y + b.height)) - y) / h)
        }
    }
}
