internal import CVips
import Core
import Glibc
import Syscalls

extension OpenFile {
    /// Opens `path` for the pipeline: a missing file or a folder is "no such source".
    public static func opening(_ path: String) throws(ImagingError) -> OpenFile {
        switch OpenFile.open(path) {
        case .success(let f): return f
        case .failure(let e):
            throw ImagingError(.open, AspectError(.notFound, "no such source image"), detail: e.description)
        }
    }
}

/// What the loaders read for one job: the source file as it is, or, for an SVG, the
/// sanitised document in memory (the file's own bytes are then never drawn).
final class SourceInput {
    let file: OpenFile
    /// The bytes that replace the file's, owned here for as long as a source reads them.
    let memory: UnsafeMutableRawBufferPointer?
    /// A video, opened once by FFmpeg for the header and then its frames.
    let video: VideoSource?

    init(_ file: OpenFile, video: VideoSource? = nil) {
        self.file = file
        self.video = video
        memory = nil
    }

    init(_ file: OpenFile, replacedBy bytes: [UInt8]) {
        self.file = file
        video = nil
        let m = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 16)
        m.copyBytes(from: bytes)
        memory = UnsafeMutableRawBufferPointer(rebasing: m[0..<bytes.count])
    }

    deinit { memory?.deallocate() }
}

/// One stage's libvips source over a `SourceInput`, with the job's deadline: past it, a
/// read of the file fails and the loader decoding from it stops. (Bytes in memory are not
/// read against the deadline; it is checked between the stages.)
final class VSource {
    let pointer: UnsafeMutablePointer<VipsSource>
    /// Keeps the descriptor open, or the bytes allocated, while libvips may read them.
    private let input: SourceInput

    init(_ input: SourceInput, deadline: Deadline) throws(ImagingError) {
        let made =
            input.memory.map { vips_source_new_from_memory($0.baseAddress, $0.count) }
            ?? cvips_source_new(input.file.fd, deadline.nanoseconds)
        guard let p = made else {
            throw ImagingError(
                .open, AspectError(.unsupportedSource, "the source cannot be read"), detail: Vips.takeError())
        }
        pointer = p
        self.input = input
    }

    deinit { g_object_unref(pointer) }

    /// Whether a read failed because the deadline had passed.
    var expired: Bool { cvips_source_expired(pointer) != 0 }
}

/// When a job must be done by, on the monotonic clock; `none` when it has no limit.
public struct Deadline: Sendable {
    /// Monotonic nanoseconds; 0 for no deadline.
    let nanoseconds: UInt64
    /// The limit it came from, for the message.
    let milliseconds: Int

    public static let none = Deadline(nanoseconds: 0, milliseconds: 0)

    /// `milliseconds` from now; no deadline when it is 0.
    public static func after(milliseconds: Int) -> Deadline {
        guard milliseconds > 0 else { return .none }
        return Deadline(nanoseconds: cvips_now_ns() + UInt64(milliseconds) * 1_000_000, milliseconds: milliseconds)
    }

    /// On the same clock as the source's reads check (`cvips_now_ns`).
    var passed: Bool { nanoseconds > 0 && cvips_now_ns() > nanoseconds }

    /// The error a job past its deadline ends with: 504 by the server's table.
    var error: ImagingError {
        ImagingError(
            .timeout,
            AspectError(
                .processingTimeout,
                "processing this image took longer than limits.processingTimeoutMs (\(milliseconds) ms)"))
    }

    /// Throws the timeout when the deadline has passed: checked between the pipeline's stages.
    func check() throws(ImagingError) {
        if passed { throw error }
    }
}
