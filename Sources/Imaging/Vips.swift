import CVips
import Core
import Foundation

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

    /// libvips' error text since the last call, cleared. The buffer is process-wide, so
    /// with several workers it may hold another job's text too: it is for the log only.
    static func takeError() -> String {
        guard let copy = vips_error_buffer_copy() else { return "" }
        defer { g_free(copy) }
        return String(cString: copy).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
