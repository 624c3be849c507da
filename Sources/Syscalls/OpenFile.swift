import Glibc

/// An open file: the one owner of its descriptor, closed in `deinit` when the last holder
/// lets go. Readers use pread(2) and sendfile(2) from explicit offsets, which leave the
/// file's own position alone, so one descriptor may feed many readers at once, and a file
/// is read as it was opened, whatever happens to its path meanwhile (a rename, an eviction).
public final class OpenFile: Sendable {
    public let fd: Int32
    /// The whole file, when it was small enough to be read at open: a response then goes
    /// out with its head in one write instead of a write and a sendfile(2).
    public let contents: [UInt8]?

    /// Takes ownership of `fd`.
    public init(owning fd: Int32, contents: [UInt8]? = nil) {
        self.fd = fd
        self.contents = contents
    }

    /// Opens `path` read-only; the errno when it cannot be opened.
    public static func open(_ path: String) -> Result<OpenFile, SystemError> {
        do throws(SystemError) {
            return .success(OpenFile(owning: try Syscall.retrying("open") { Glibc.open(path, O_RDONLY | O_CLOEXEC) }))
        } catch {
            return .failure(error)
        }
    }

    /// Opens a regular file at `path` read-only, with its bytes when it is at most
    /// `keepBytes` long (and not empty), and its size as opened; nil when it cannot be
    /// opened. For files that never change once in place.
    public static func open(_ path: String, keepingUpTo keepBytes: Int) -> (file: OpenFile, size: Int64)? {
        guard let fd = try? Syscall.retrying("open", { Glibc.open(path, O_RDONLY | O_CLOEXEC) }) else { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            return nil
        }
        let size = Int64(st.st_size)
        guard keepBytes > 0, size > 0, size <= keepBytes else { return (OpenFile(owning: fd), size) }
        // Short (it cannot be, unless the file is damaged): served from the descriptor.
        let contents = read(fd, count: Int(size))
        return (OpenFile(owning: fd, contents: contents), contents.map { Int64($0.count) } ?? size)
    }

    /// The whole file, `size` bytes from the start; nil when it is shorter or unreadable.
    public func read(count: Int) -> [UInt8]? { Self.read(fd, count: count) }

    private static func read(_ fd: Int32, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { raw in
                (try? Syscall.retrying("pread") {
                    pread(fd, raw.baseAddress?.advanced(by: done), count - done, off_t(done))
                })
                    ?? 0
            }
            guard n > 0 else { return nil }
            done += n
        }
        return bytes
    }

    deinit { close(fd) }

    /// The file's size in bytes, from fstat(2); nil when it is not a regular file.
    public var regularFileSize: Int64? {
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(st.st_size)
    }
}
