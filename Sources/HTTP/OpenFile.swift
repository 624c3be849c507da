import Glibc

/// A file descriptor shared by whoever holds a reference, closed when the last one goes.
/// Responses send it with sendfile(2) from an explicit offset, which leaves the file's own
/// position alone, so one descriptor may feed many responses at once.
public final class OpenFile: Sendable {
    public let fd: Int32

    /// Takes ownership of `fd`.
    public init(fd: Int32) { self.fd = fd }

    /// Opens `path` read-only; nil when it cannot be opened.
    public static func open(_ path: String) -> OpenFile? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        return fd >= 0 ? OpenFile(fd: fd) : nil
    }

    deinit { close(fd) }
}
