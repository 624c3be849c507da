internal import CAV
internal import CVips
import Core
import Syscalls

/// Which video container a source's first bytes say it is (SPEC: Video): MP4, MOV and
/// M4V are `mp4`, WebM is `webm`, other Matroska is `mkv`. A HEIF or AVIF is also an ISO
/// media file, told apart by its brand, and left to libvips.
enum VideoSniff {
    static let imageBrands: Set<String> = [
        "heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1", "mif2", "avif", "avis",
    ]
    /// QuickTime files written before `ftyp` existed start with one of these atoms.
    static let quickTimeAtoms: Set<String> = ["moov", "mdat", "wide", "free", "skip"]

    static func container(_ prefix: [UInt8]) -> String? {
        func text(_ range: Range<Int>) -> String? {
            prefix.count >= range.upperBound ? String(decoding: prefix[range], as: UTF8.self) : nil
        }
        if text(4..<8) == "ftyp" {
            return text(8..<12).map { imageBrands.contains($0) } == true ? nil : "mp4"
        }
        if let atom = text(4..<8), quickTimeAtoms.contains(atom) { return "mp4" }
        if prefix.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) {
            // The EBML header's DocType, within the first bytes.
            return String(decoding: prefix, as: UTF8.self).contains("webm") ? "webm" : "mkv"
        }
        return nil
    }
}

/// A video opened by FFmpeg's libraries over the source file: its stream facts, and its
/// frames decoded one moment at a time.
final class VideoSource {
    let pointer: OpaquePointer
    let facts: cav_facts
    /// Keeps the descriptor open while FFmpeg may read it.
    private let file: OpenFile

    init(_ file: OpenFile, deadline: Deadline) throws(ImagingError) {
        var facts = cav_facts()
        var error: Int32 = 0
        guard let p = cav_open(file.fd, deadline.nanoseconds, &facts, &error) else {
            if error == Int32(CAV_DEADLINE) || deadline.passed { throw deadline.error }
            throw ImagingError(
                .header,
                AspectError(
                    .unsupportedSource,
                    "the source is not a video this service can decode: it is corrupt, or has no video stream"))
        }
        pointer = p
        self.facts = facts
        self.file = file
    }

    deinit { cav_close(pointer) }

    var storedSize: Size { Size(width: Int(facts.width), height: Int(facts.height)) }
    var rotation: Int { Int(facts.rotation) }

    /// The frame upright: the stored size, turned by the stream's rotation.
    var uprightSize: Size {
        rotation == 90 || rotation == 270 ? Size(width: storedSize.height, height: storedSize.width) : storedSize
    }

    var videoFacts: VideoFacts {
        let codec = withUnsafeBytes(of: facts.codec) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return VideoFacts(duration: facts.duration, codec: codec, fps: facts.fps)
    }

    /// The frame shown at `seconds`, upright, as an 8-bit sRGB image in memory.
    func frame(at seconds: Double, maxDecodeSeconds: Double, deadline: Deadline) throws(ImagingError) -> VImage {
        var rgb: UnsafeMutablePointer<UInt8>?
        let status = cav_frame(pointer, seconds, maxDecodeSeconds, deadline.nanoseconds, &rgb)
        guard status == 0, let rgb else {
            if status == Int32(CAV_DEADLINE) || deadline.passed { throw deadline.error }
            if status == Int32(CAV_TOO_FAR) {
                throw ImagingError(
                    .limits,
                    AspectError(
                        .sourceTooLarge,
                        "the frame at \(NumberSyntax.text(seconds)) s lies more than limits.maxVideoSeconds "
                            + "(\(NumberSyntax.text(maxDecodeSeconds)) s) of video after the keyframe before it"))
            }
            throw ImagingError(
                .decode, AspectError(.unsupportedSource, "the video cannot be decoded: it is corrupt or truncated"))
        }
        defer { free(rgb) }
        let (w, h) = (Int(facts.width), Int(facts.height))
        guard
            let made = vips_image_new_from_memory_copy(
                rgb, w * h * 3, Int32(w), Int32(h), 3, VIPS_FORMAT_UCHAR)
        else {
            throw ImagingError(
                .process, AspectError(.internalError, "making an image failed"), detail: Vips.takeError())
        }
        var image = VImage(owning: made)
        image = try image.then("colourspace") { cvips_colourspace($0, $1, VIPS_INTERPRETATION_sRGB) }
        switch rotation {
        case 90: image = try image.then("rot") { cvips_rot($0, $1, VIPS_ANGLE_D90) }
        case 180: image = try image.then("rot") { cvips_rot($0, $1, VIPS_ANGLE_D180) }
        case 270: image = try image.then("rot") { cvips_rot($0, $1, VIPS_ANGLE_D270) }
        default: break
        }
        return image
    }
}
