import Glibc

/// An open source file: the one owner of its descriptor, closed in `deinit`. Sources hand
/// it to the renderer, which reads it by pread(2), so the file is read as it was opened,
/// whatever happens to its path meanwhile (a rename, an eviction from the source cache).
public final class SourceFile: Sendable {
    public let fd: Int32

    /// Takes ownership of `fd`.
    public init(owning fd: Int32) { self.fd = fd }

    /// Opens `path` read-only; the errno when it cannot be opened.
    public static func open(_ path: String) -> Result<SourceFile, SystemError> {
        do throws(SystemError) {
            return .success(SourceFile(owning: try Syscall.retrying("open") { Glibc.open(path, O_RDONLY | O_CLOEXEC) }))
        } catch {
            return .failure(error)
        }
    }

    deinit { close(fd) }

    /// The file's size in bytes, from fstat(2); nil when it is not a regular file.
    public var regularFileSize: Int64? {
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(st.st_size)
    }
}
