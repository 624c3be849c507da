internal import CLinux
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
    private struct Folders {
        /// The folders watched, relative to the root ("" is the root), with their
        /// watch descriptors.
        var byPath: [String: Int32] = [:]
    }

    private let fd: Int32
    private let folders = Mutex(Folders())
    private let generation = Atomic<UInt64>(0)
    private let failed = Atomic<Bool>(false)
    /// How many threads are between reading the instance and counting what they read.
    private let readers = Atomic<Int>(0)

    /// nil when the kernel gives no inotify instance.
    init?() {
        fd = clinux_inotify()
        guard fd >= 0 else { return nil }
    }

    deinit { Glibc.close(fd) }

    /// A count that moves with every change seen under the watched folders, read after
    /// the events queued so far; nil once watching has failed, or while another thread
    /// is between taking events and counting them (its events might not be counted yet).
    /// Lock-free: every hit of every event loop asks.
    func stamp() -> UInt64? {
        guard !failed.load(ordering: .sequentiallyConsistent) else { return nil }
        readers.add(1, ordering: .sequentiallyConsistent)
        drain()
        // Alone: any event queued before this thread's read was taken by it, or by one
        // that finished, and so counted it before leaving.
        let alone = readers.load(ordering: .sequentiallyConsistent) == 1
        let count = generation.load(ordering: .sequentiallyConsistent)
        readers.subtract(1, ordering: .sequentiallyConsistent)
        return alone && !failed.load(ordering: .sequentiallyConsistent) ? count : nil
    }

    /// Watches every folder from the root (`root`, a real path) down to the one holding
    /// `relative`: called before the source is stat(2)ed, so a change after that stat is
    /// an event.
    func watch(root: String, file relative: String) {
        guard !failed.load(ordering: .sequentiallyConsistent) else { return }
        folders.withLock { f in
            var folder = ""
            var parts = relative.split(separator: "/", omittingEmptySubsequences: true).dropLast().makeIterator()
            while true {
                if f.byPath[folder] == nil {
                    let wd = clinux_inotify_watch_folder(fd, folder.isEmpty ? root : root + "/" + folder)
                    guard wd >= 0 else {
                        // A folder gone meanwhile (or the root renamed under its open
                        // descriptor): the count moves, so no stamp read before this
                        // vouches for the source; it is stat(2)ed until it can be
                        // watched. A watch the kernel refuses ends the watching.
                        if errno == ENOENT || errno == ENOTDIR {
                            generation.add(1, ordering: .sequentiallyConsistent)
                        } else {
                            failed.store(true, ordering: .sequentiallyConsistent)
                        }
                        return
                    }
                    f.byPath[folder] = wd
                }
                guard let next = parts.next() else { return }
                folder = folder.isEmpty ? String(next) : folder + "/" + next
            }
        }
    }

    /// The root now names another folder: every watch goes, and the count moves.
    func reset() {
        unwatchAll()
        generation.add(1, ordering: .sequentiallyConsistent)
    }

    private func unwatchAll() {
        folders.withLock { f in
            for wd in f.byPath.values { _ = clinux_inotify_unwatch(fd, wd) }
            f.byPath.removeAll()
        }
    }

    /// Reads every queued event: any moves the count; one that ends or moves a watch, or
    /// says events were lost, drops every watch.
    private func drain() {
        withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 8) { buffer in
            while true {
                let n = read(fd, buffer.baseAddress, buffer.count)
                if n < 0 {
                    if errno == EINTR { continue }
                    if errno != EAGAIN { failed.store(true, ordering: .sequentiallyConsistent) }
                    return
                }
                guard n > 0 else { return }
                generation.add(1, ordering: .sequentiallyConsistent)
                if clinux_inotify_summarise(buffer.baseAddress, n).structural != 0 { unwatchAll() }
            }
        }
    }
}
