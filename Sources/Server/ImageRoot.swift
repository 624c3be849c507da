import CLinux
import Cache
import Core
import Glibc
import Imaging
import Synchronization
import Syscalls

/// The image root, as its configured path names it now. The folder is held open, so a
/// source is confined by its real path and its identity is read relative to the open
/// folder (a hit's stat(2) walks only the source's own part of the path). The path is
/// resolved again every `checkInterval`, and at once when a source would otherwise be
/// refused, so a root folder renamed and replaced, or a symlink flipped atomically to a
/// new folder (how deployments and Kubernetes volumes publish content), is followed
/// without a restart.
struct ImageRoot: Sendable {
    /// As configured.
    let path: String
    private let tracker: Tracker

    /// A source inside the root: where libvips reads it, and where it lies in the root.
    struct Source: Sendable {
        var absolute: String
        var relative: String
    }

    /// The folder the path named when it was last resolved, open.
    final class Folder: Sendable {
        /// With every symlink resolved.
        let realPath: String
        let fd: Int32
        let device: UInt64
        let inode: UInt64

        init(realPath: String, fd: Int32, device: UInt64, inode: UInt64) {
            self.realPath = realPath
            self.fd = fd
            self.device = device
            self.inode = inode
        }

        deinit { Glibc.close(fd) }
    }

    /// The current folder and when the path is due to be resolved again, behind a Mutex.
    final class Tracker: Sendable {
        struct State {
            var folder: Folder?
            var problem: String?
            var nextCheck: UInt64 = 0
        }

        let state = Mutex(State())
        let interval: UInt64

        init(interval: UInt64) { self.interval = interval }
    }

    /// Resolves and opens `path`, or warns that sources cannot be served (yet).
    init(_ path: String, checkIntervalMs: Int = 1_000) {
        self.path = path
        tracker = Tracker(interval: UInt64(max(0, checkIntervalMs)) * 1_000_000)
        if let problem = refresh(force: true).problem {
            ServeCommand.log(.warning, "images.root \(path) cannot be used: \(problem)")
        }
    }

    /// The folder the path names, resolved again when the interval has passed or `force`;
    /// the problem when it cannot be opened.
    @discardableResult
    func refresh(force: Bool = false) -> (folder: Folder?, problem: String?) {
        let now = Clock.now()
        let current = tracker.state.withLock { s -> (Folder?, String?)? in
            force || now >= s.nextCheck ? nil : (s.folder, s.problem)
        }
        if let current { return current }
        // Outside the lock: stat, realpath and open may touch a slow disk.
        var st = stat()
        let found = stat(path, &st) == 0
        let held = tracker.state.withLock { $0.folder }
        var folder = held
        var problem: String?
        if !found {
            folder = nil
            problem = String(cString: strerror(errno))
        } else if held == nil || held?.device != UInt64(st.st_dev) || held?.inode != UInt64(st.st_ino) {
            switch Self.openFolder(path) {
            case .success(let f): folder = f
            case .failure(let e):
                folder = nil
                problem = String(cString: strerror(e.errno))
            }
        }
        tracker.state.withLock {
            $0.folder = folder
            $0.problem = problem
            $0.nextCheck = now + tracker.interval
        }
        return (folder, problem)
    }

    private static func openFolder(_ path: String) -> Result<Folder, SystemError> {
        guard let r = realpath(path, nil) else { return .failure(SystemError(call: "realpath", errno: errno)) }
        defer { free(r) }
        let fd: Int32
        do throws(SystemError) {
            fd = try Syscall.retrying("open") { Glibc.open(r, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        } catch {
            return .failure(error)
        }
        var st = stat()
        fstat(fd, &st)
        return .success(
            Folder(realPath: String(cString: r), fd: fd, device: UInt64(st.st_dev), inode: UInt64(st.st_ino)))
    }

    /// The source's real path, all symlinks resolved, when it lies under the real image
    /// root; a symlink that leads out is refused (403), a missing file is 404. The string
    /// checks of Core come first; this is the check on what the path really names. A
    /// refusal is checked once more against the path resolved now, so a root swapped a
    /// moment ago is not mistaken for a source leading out of it.
    func confine(_ src: String) -> Result<Source, AspectError> {
        let first = confine(src, in: refresh().folder)
        if case .success = first { return first }
        return confine(src, in: refresh(force: true).folder)
    }

    private func confine(_ src: String, in folder: Folder?) -> Result<Source, AspectError> {
        guard let folder, let resolved = realpath(path + "/" + src, nil) else {
            return .failure(AspectError(.notFound, "no such source image: \(src)"))
        }
        defer { free(resolved) }
        let real = String(cString: resolved)
        let prefix = folder.realPath == "/" ? "/" : folder.realPath + "/"
        guard real.hasPrefix(prefix) else {
            return .failure(AspectError(.forbiddenPath, "src '\(src)' is refused: it leads outside the image root"))
        }
        return .success(Source(absolute: real, relative: String(real.utf8.dropFirst(prefix.utf8.count)) ?? real))
    }

    /// Opens a confined source for rendering, by its symlink-free real path below the open
    /// root, refusing any symlink on the way: a path swapped for a symlink after `confine`
    /// checked it is not followed out of the root (403), a file gone meanwhile is a 404.
    func open(_ source: Source, src: String) -> Result<SourceFile, AspectError> {
        guard let folder = refresh().folder else {
            return .failure(AspectError(.notFound, "no such source image: \(src)"))
        }
        let file: Int32
        do throws(SystemError) {
            file = try Self.openBeneath(folder.fd, source.relative)
        } catch {
            if error.errno == ENOENT || error.errno == ENOTDIR {
                return .failure(AspectError(.notFound, "no such source image: \(src)"))
            }
            return .failure(
                AspectError(.forbiddenPath, "src '\(src)' is refused: it changed into a link while being opened"))
        }
        return .success(SourceFile(owning: file))
    }

    /// openat2 beneath the folder; EAGAIN (a rename raced the lookup) is tried again, as
    /// EINTR is by `Syscall`.
    private static func openBeneath(_ dir: Int32, _ relative: String) throws(SystemError) -> Int32 {
        var attempts = 0
        while true {
            do throws(SystemError) {
                return try Syscall.retrying("openat2") { clinux_open_beneath(dir, relative) }
            } catch {
                attempts += 1
                if error.errno != EAGAIN || attempts >= 8 { throw error }
            }
        }
    }

    /// The source's identity from stat(2) relative to the open root; nil when it is not a
    /// regular file.
    func identity(_ source: Source, src: String) -> CacheKey.SourceIdentity? {
        var st = stat()
        let found = refresh().folder.map { fstatat($0.fd, source.relative, &st, 0) } ?? stat(source.absolute, &st)
        guard found == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return CacheKey.SourceIdentity(
            path: src, size: Int64(st.st_size),
            modifiedNanoseconds: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec))
    }
}
