import CLinux
import Cache
import Core
import Glibc
import Imaging

/// The image root, resolved once and held open: a source is confined by its real path,
/// and its identity is read relative to the open folder, so a hit's stat(2) walks only the
/// source's own part of the path.
struct ImageRoot: Sendable {
    /// As configured.
    let path: String
    /// With every symlink resolved; nil when the root cannot be resolved.
    let realPath: String?
    /// The root folder, open for lookups relative to it; -1 when it cannot be opened.
    let fd: Int32

    /// A source inside the root: where libvips reads it, and where it lies in the root.
    struct Source: Sendable {
        var absolute: String
        var relative: String
    }

    /// Resolves and opens `path`, or warns that sources cannot be served.
    init(_ path: String) {
        self.path = path
        guard let r = realpath(path, nil) else {
            Console.error(
                "aspect serve: warning: images.root \(path) cannot be resolved: \(String(cString: strerror(errno)))")
            realPath = nil
            fd = -1
            return
        }
        defer { free(r) }
        realPath = String(cString: r)
        fd = Glibc.open(r, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    }

    /// The source's real path, all symlinks resolved, when it lies under the real image
    /// root; a symlink that leads out is refused (403), a missing file is 404. The string
    /// checks of Core come first; this is the check on what the path really names.
    func confine(_ src: String) -> Result<Source, AspectError> {
        guard let realPath, let resolved = realpath(path + "/" + src, nil) else {
            return .failure(AspectError(.notFound, "no such source image: \(src)"))
        }
        defer { free(resolved) }
        let real = String(cString: resolved)
        let prefix = realPath == "/" ? "/" : realPath + "/"
        guard real.hasPrefix(prefix) else {
            return .failure(AspectError(.forbiddenPath, "src '\(src)' is refused: it leads outside the image root"))
        }
        return .success(Source(absolute: real, relative: String(real.utf8.dropFirst(prefix.utf8.count)) ?? real))
    }

    /// Opens a confined source for rendering, by its symlink-free real path below the open
    /// root, refusing any symlink on the way: a path swapped for a symlink after `confine`
    /// checked it is not followed out of the root (403), a file gone meanwhile is a 404.
    func open(_ source: Source, src: String) -> Result<SourceFile, AspectError> {
        guard fd >= 0 else { return .failure(AspectError(.notFound, "no such source image: \(src)")) }
        let file = clinux_open_beneath(fd, source.relative)
        guard file >= 0 else {
            if errno == ENOENT || errno == ENOTDIR {
                return .failure(AspectError(.notFound, "no such source image: \(src)"))
            }
            return .failure(
                AspectError(.forbiddenPath, "src '\(src)' is refused: it changed into a link while being opened"))
        }
        return .success(SourceFile(owning: file))
    }

    /// The source's identity from stat(2) relative to the open root; nil when it is not a
    /// regular file.
    func identity(_ source: Source, src: String) -> CacheKey.SourceIdentity? {
        var st = stat()
        let found = fd >= 0 ? fstatat(fd, source.relative, &st, 0) : stat(source.absolute, &st)
        guard found == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return CacheKey.SourceIdentity(
            path: src, size: Int64(st.st_size),
            modifiedNanoseconds: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec))
    }
}
