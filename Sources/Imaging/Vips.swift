internal import CVips
import Core
import Foundation
import Synchronization

/// libvips, started once per process: operation cache off and its own concurrency 1,
/// so parallelism comes from the server's workers.
public enum Vips {
    /// Swift runs a static's initialiser once, thread-safely.
    private static let started: Bool = cvips_start("aspect") == 0

    /// Starts libvips if it is not started yet.
    public static func start() throws(ImagingError) {
        guard started else {
            throw ImagingError(
                .start, AspectError(.internalError, "the image library did not start"), detail: takeError())
        }
    }

    /// Blocks every libvips loader but those that read `formats` (SPEC: Source formats),
    /// for the whole process: ImageMagick, OpenSlide, FITS, matrix, CSV, raw, vips, EXR
    /// and the rest are then never reached, whatever a source's bytes look like. The
    /// executable calls it once, with `images.formats`, before serving.
    public static func restrictLoaders(to formats: Set<String>) throws(ImagingError) {
        try start()
        let names = formats.sorted().flatMap { LoaderName.classes(of: $0) }.map { strdup($0) }
        defer { for n in names { free(n) } }
        var pointers = names.map { UnsafePointer($0) }
        pointers.withUnsafeMutableBufferPointer { cvips_restrict_loaders($0.baseAddress, Int32($0.count)) }
    }

    /// The levels of libvips' and GLib's log lines, and of the imaging's own.
    public enum LogLevel: String, Sendable { case debug, info, warn, error }

    /// Where libvips' and GLib's log lines go: level, domain (`VIPS`, `GLib`, …), message.
    public typealias LogSink = @Sendable (LogLevel, String, String) -> Void

    private static let sink = Mutex<LogSink?>(nil)

    /// Routes libvips' and GLib's log to `sink` (the service's log) instead of raw text
    /// on stderr, which would break a JSON log.
    /// `debug`: GLib's debug and info messages too (else GLib drops them unformatted).
    public static func routeLog(debug: Bool = false, to sink: @escaping LogSink) {
        self.sink.withLock { $0 = sink }
        let callback: cvips_log_sink = { level, domain, message in
            guard let message else { return }
            let l: LogLevel =
                switch level {
                case 3: .error
                case 2: .warn
                case 1: .info
                default: .debug
                }
            let d = domain.map { String(cString: $0) } ?? "glib"
            let text = String(cString: message)
            Vips.sink.withLock { $0 }?(l, d, text)
        }
        cvips_route_log(callback, debug ? 1 : 0)
    }

    /// A line of Aspect's own imaging work to the same log, at `level`.
    static func log(_ level: LogLevel, _ domain: String, _ message: String) {
        sink.withLock { $0 }?(level, domain, message)
    }

    /// libvips' error text since the last call, cleared. The buffer is process-wide, so
    /// with several workers it may hold another job's text too: it is for the log only.
    static func takeError() -> String {
        guard let copy = vips_error_buffer_copy() else { return "" }
        defer { g_free(copy) }
        return String(cString: copy).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
