import CLinux
import Glibc
import Synchronization

/// How a folder root's hits learn that nothing under it changed without a stat(2) each:
/// one inotify instance watching every folder from the root down to each source resolved.
/// A source is stat(2)ed once after its folders are watched; from then on any change to
/// an entry of those folders (written, touched, renamed, created, removed), or to a
/// folder itself, is an event, and `stamp()` reads the events queued before it answers,
/// so a change made before a request is seen by that request, not a moment later.
///
/// A folder renamed or removed, or events lost, drops every watch: the sources are
/// stat(2)ed again, and watched again. A watch that cannot be added (the kernel's
/// `max_user_watches`) or an instance that fails ends the watching: `stamp()` says nil
/// and every hit stat(2)s, as without a watch.
final class FolderWatch: Sendable {
    private struct State {
        let fd: Int32
        /// The folders watched, relative to the root ("" is the root), with their
        /// watch descriptors.
        var folders: [String: Int32] = [:]
        var generation: UInt64 = 0
        var failed = false
    }

    private let state: Mutex<State>

    /// nil when the kernel gives no inotify instance.
    init?() {
        let fd = clinux_inotify()
        guard fd >= 0 else { return nil }
        state = Mutex(State(fd: fd))
    }

    deinit { state.withLock { _ = Glibc.close($0.fd) } }

    /// A count that moves with every change seen under the watched folders, read after
    /// the events queued so far; nil once watching has failed.
    func stamp() -> UInt64? {
        state.withLock { s -> UInt64? in
            guard !s.failed else { return nil }
            Self.drain(&s)
            return s.failed ? nil : s.generation
        }
    }

    /// Watches every folder from the root (`root`, a real path) down to the one holding
    /// `relative`: called before the source is stat(2)ed, so a change after that stat is
    /// an event.
    func watch(root: String, file relative: String) {
        state.withLock { s in
            guard !s.failed else { return }
            var folder = ""
            var parts = relative.split(separator: "/", omittingEmptySubsequences: true).dropLast().makeIterator()
            while true {
                if s.folders[folder] == nil {
                    let wd = clinux_inotify_watch_folder(s.fd, folder.isEmpty ? root : root + "/" + folder)
                    guard wd >= 0 else {
                        // A folder gone meanwhile (or the root renamed under its open
                        // descriptor): the count moves, so no stamp read before this
                        // vouches for the source; it is stat(2)ed until it can be
                        // watched. A watch the kernel refuses ends the watching.
                        if errno == ENOENT || errno == ENOTDIR { s.generation &+= 1 } else { s.failed = true }
                        return
                    }
                    s.folders[folder] = wd
                }
                guard let next = parts.next() else { return }
                folder = folder.isEmpty ? String(next) : folder + "/" + next
            }
        }
    }

    /// The root now names another folder: every watch goes, and the count moves.
    func reset() {
        state.withLock { s in
            Self.unwatchAll(&s)
            s.generation &+= 1
        }
    }

    private static func unwatchAll(_ s: inout State) {
        for wd in s.folders.values { _ = clinux_inotify_unwatch(s.fd, wd) }
        s.folders.removeAll()
    }

    /// Reads every queued event: any moves the count; one that ends or moves a watch, or
    /// says events were lost, drops every watch.
    private static func drain(_ s: inout State) {
        withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 8) { buffer in
            while true {
                let n = read(s.fd, buffer.baseAddress, buffer.count)
                if n < 0 {
                    if errno == EINTR { continue }
                    if errno != EAGAIN { s.failed = true }
                    return
                }
                guard n > 0 else { return }
                s.generation &+= 1
                let summary = clinux_inotify_summarise(buffer.baseAddress, n)
                if summary.structural != 0 { unwatchAll(&s) }
            }
        }
    }
}
