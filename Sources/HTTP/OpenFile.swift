import Glibc

/// A file descriptor shared by whoever holds a reference, closed when the last one goes.
/// Responses send it with sendfile(2) from an explicit offset, which leaves the file's own
/// position alone, so one descriptor may feed many responses at once.
public final class OpenFile: Sendable {
    public let fd: Int32
    /// The whole file, when it was small enough to be read at open: a response then goes
    /// out with its head in one write instead of a write and a sendfile(2).
    public let contents: [UInt8]?

    /// Takes ownership of `fd`.
    public init(fd: Int32, contents: [UInt8]? = nil) {
        self.fd = fd
        self.contents = contents
    }

    /// Opens `path` read-only; nil when it cannot be opened.
    public static func open(_ path: String) -> OpenFile? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        return fd >= 0 ? OpenFile(fd: fd) : nil
    }

    deinit { close(fd) }
}
