import Core
import Foundation
import HTTPServer
import Imaging
import Isolation
import Syscalls

/// A render worker's warm-up (SPEC: Isolation: "after every lazy loader is loaded"): before
/// the lock, it renders a tiny file of every source format it may be given, so that each
/// loader, plugin and font that libvips, GLib, fontconfig, poppler and FFmpeg open on first
/// use is open already. After the lock a path opens nothing (EACCES).
enum WarmUp {
    /// The files, made by the service (a worker makes nothing it could then be tricked by):
    /// one tiny file of each enabled source format, by its loader's name.
    static func samples(formats: Set<String>) -> [(String, [UInt8])] {
        var rgbPixels: [UInt8] = []
        var rgbaPixels: [UInt8] = []
        for i in 0..<256 {
            let (r, g) = (UInt8(i % 16 * 16), UInt8(i / 16 * 16))
            rgbPixels += [r, g, 128]
            rgbaPixels += [r, g, 128, 200]
        }
        let rgba = RawImage(width: 16, height: 16, bands: 4, pixels: rgbaPixels)
        let rgb = RawImage(width: 16, height: 16, bands: 3, pixels: rgbPixels)
        var out: [(String, [UInt8])] = []
        func add(_ format: String, _ make: () throws -> [UInt8]) {
            guard formats.contains(format), let bytes = try? make() else { return }
            out.append((format, bytes))
        }
        add("jpeg") { try ImageFile.encode(rgb, as: .jpeg) }
        add("png") { try ImageFile.encode(rgba, as: .png) }
        add("webp") { try ImageFile.encode(rgba, as: .webp) }
        add("gif") { try ImageFile.encode(rgb, as: .gif, pageHeight: 8, delays: [40, 40]) }
        add("heif") { try ImageFile.encode(rgb, as: .avif) }
        add("tiff") { try ImageFile.encode(rgb, as: .tiff) }
        add("jxl") { try ImageFile.encode(rgb, as: .jxl) }
        add("svg") {
            Array(
                #"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 20"><text x="2" y="15" font-family="sans-serif" font-size="12">Aa</text></svg>"#
                    .utf8)
        }
        add("pdf") { ImageFile.pdf(pages: [ImageFile.Page(width: 40, height: 40, rgb: (30, 90, 160))]) }
        let video = ["mp4", "webm", "mkv"].first { formats.contains($0) }
        if let video {
            // A folder of its own (mkdtemp: made new, this user's only), removed after.
            var template = Array((FileManager.default.temporaryDirectory.path + "/aspect-warm-XXXXXX").utf8CString)
            let folder: String? = template.withUnsafeMutableBufferPointer { buffer in
                guard let base = buffer.baseAddress, let made = mkdtemp(base) else { return nil }
                return String(cString: made)
            }
            guard let folder else { return out }
            let path = folder + "/clip.mp4"
            defer {
                unlink(path)
                rmdir(folder)
            }
            let frames = (0..<4).map { _ in rgb }
            if (try? ImageFile.writeClip(to: path, frames: frames, fps: 4, codec: .h264, keyframeEvery: 2)) != nil,
                let data = FileManager.default.contents(atPath: path)
            {
                out.append((video, [UInt8](data)))
            }
        }
        return out
    }

    /// What a worker renders of the samples before it locks itself down: each source, to a
    /// small PNG, and a video's frames as a preview. Only what opens files on its first use
    /// needs warming (loaders' modules, fontconfig and its fonts, poppler's data); the
    /// encoders, dlib's model and orc's code open none (`IsolationTests.everyFormatRendersInAWorker`
    /// holds every source and output format to that). Kept small: every new worker pays it
    /// (BENCHMARKS.md: 8 encoders and a face search made a worker's start cost 0.3 s of CPU).
    /// Failures are only logged: a loader that is not there is not one the service will
    /// ask for.
    static func run(_ thumbnailer: Thumbnailer, samples: [(String, [UInt8])]) {
        var queries = samples.map { ($0.0, $0.1, "w=8&format=png") }
        if let video = samples.first(where: { ["mp4", "webm", "mkv"].contains($0.0) }) {
            queries.append((video.0, video.1, "w=8&frames=2&format=png"))
        }
        for (format, bytes, query) in queries {
            let fd = Sandbox.sealableMemfd("aspect-warm-up")
            guard fd >= 0 else { return }
            let file = OpenFile(owning: fd)
            guard bytes.withUnsafeBytes({ (try? Syscall.writeAll(fd, $0)) != nil }), lseek(fd, 0, SEEK_SET) == 0,
                let request = try? ThumbRequest.parse(query: "src=warm-up&" + query, limits: RequestLimits())
            else { continue }
            do throws(ImagingError) {
                _ = try thumbnailer.thumbnail(file: file, request: request, requestLimits: RequestLimits())
            } catch {
                EventLog.write(.debug, "render worker: warming up \(format) (\(query)): \(error)")
            }
        }
    }
}
