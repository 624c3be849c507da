internal import CLinux
import Core
import Glibc
import Stores
import Synchronization
import Syscalls

/// The image root, as its configured path names it now. The folder is held open, so a
/// source is confined by its real path and its identity is read relative to the open
/// folder (a hit's stat(2) walks only the source's own part of the path). The path is
/// resolved again every `checkInterval`, and at once when a source would otherwise be
/// refused, so a root folder renamed and replaced, or a symlink flipped atomically to a
/// new folder (how deployments and Kubernetes volumes publish content), is followed
/// without a restart.
///
/// With `watchChanges`, the folders of the sources resolved are watched (`FolderWatch`),
/// so a hit whose source was stat(2)ed since the last change seen needs no stat of its
/// own (`changeStamp`).
public struct FolderSource: SourceStore {
    /// As configured.
    public let path: String
    private let tracker: Tracker
    private let watch: FolderWatch?

    /// A source inside the root: where libvips reads it, and where it lies in the root.
    public struct Source: Sendable {
        public var absolute: String
        public var relative: String
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
        /// `State.nextCheck`, readable without the lock.
        let due = Atomic<UInt64>(0)

        init(interval: UInt64) { self.interval = interval }
    }

    /// Resolves and opens `path`; `readinessProblem()` says if it cannot (yet).
    /// `watchChanges`: hits rely on inotify's events rather than a stat(2) each, where the
    /// kernel gives an inotify instance.
    public init(_ path: String, checkIntervalMs: Int = 1_000, watchChanges: Bool = true) {
        self.path = path
        tracker = Tracker(interval: UInt64(max(0, checkIntervalMs)) * 1_000_000)
        watch = watchChanges ? FolderWatch() : nil
        refresh(force: true)
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
        // Another folder (or none): what was watched under the old one vouches for nothing.
        if folder !== held { watch?.reset() }
        tracker.state.withLock {
            $0.folder = folder
            $0.problem = problem
            $0.nextCheck = now + tracker.interval
        }
        tracker.due.store(now + tracker.interval, ordering: .releasing)
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
    public func confine(_ src: String) -> Result<Source, AspectError> {
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
    func open(_ relative: String, src: String) -> Result<OpenFile, AspectError> {
        guard let folder = refresh().folder else {
            return .failure(AspectError(.notFound, "no such source image: \(src)"))
        }
        let file: Int32
        do throws(SystemError) {
            file = try Self.openBeneath(folder.fd, relative)
        } catch {
            if error.errno == ENOENT || error.errno == ENOTDIR {
                return .failure(AspectError(.notFound, "no such source image: \(src)"))
            }
            return .failure(
                AspectError(.forbiddenPath, "src '\(src)' is refused: it changed into a link while being opened"))
        }
        return .success(OpenFile(owning: file))
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
    func identity(_ relative: String, src: String) -> SourceIdentity? {
        guard let folder = refresh().folder else { return nil }
        // Watched first: a change after the stat below is an event.
        watch?.watch(root: folder.realPath, file: relative)
        var st = stat()
        guard fstatat(folder.fd, relative, &st, 0) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        let version = SourceIdentity.fileVersion(
            size: Int64(st.st_size),
            modifiedNanoseconds: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec))
        return SourceIdentity(path: src, version: version, location: relative)
    }

    // MARK: SourceStore

    public var name: String { path }

    public var fetchFigures: FetchFigures? { nil }
    public var cacheProblem: String? { nil }

    /// Confined by real path and stat(2)ed: a folder always knows at once.
    public func resolve(_ src: String) -> SourceResolution {
        switch confine(src) {
        case .failure(let e): return .failed(ServiceFailure(e, stage: "open"))
        case .success(let source):
            guard let identity = identity(source.relative, src: src) else {
                return .failed(ServiceFailure(AspectError(.notFound, "no such source image: \(src)"), stage: "open"))
            }
            return .ready(identity)
        }
    }

    public func isCurrent(_ known: SourceIdentity) -> Bool {
        identity(known.location, src: known.path) == known
    }

    /// Moves with every change under the watched folders, and when the root names another
    /// folder; nil while the root's path is due to be resolved again (`checkIntervalMs`),
    /// so that happens, and without a watch.
    public func changeStamp() -> UInt64? {
        guard let watch, Clock.now() < tracker.due.load(ordering: .acquiring) else { return nil }
        return watch.stamp()
    }

    public func fetch(_ src: String) -> Result<SourceIdentity, ServiceFailure> {
        switch resolve(src) {
        case .ready(let identity), .stale(let identity): return .success(identity)
        case .failed(let f): return .failure(f)
        case .needsFetch: return .failure(ServiceFailure(AspectError(.internalError, "unreachable"), stage: "open"))
        }
    }

    public func open(_ identity: SourceIdentity) -> Result<OpenFile, ServiceFailure> {
        open(identity.location, src: identity.path).mapError { ServiceFailure($0, stage: "open") }
    }

    /// The root's path resolved anew: a root that was swapped or went away is told as it is now.
    public func readinessProblem() -> String? {
        if let problem = refresh(force: true).problem { return "images.root \(path) cannot be used: \(problem)" }
        guard access(path, R_OK | X_OK) == 0 else { return "images.root \(path) cannot be read" }
        return nil
    }
}
