import Glibc

/// The one durable write to disk (the caches', `aspect thumb`'s outputs): a new file
/// written whole and fsynced, and put in place under its name by a rename, so a crash
/// never leaves a partial file there.
public enum AtomicFile {
    /// Writes a new file whole and fsyncs it; false (and the file may be partial) on failure.
    public static func writeDurably(_ path: String, _ bytes: [UInt8]) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        guard bytes.withUnsafeBytes({ (try? Syscall.writeAll(fd, $0)) != nil }) else {
            close(fd)
            return false
        }
        let synced = fsync(fd) == 0
        return close(fd) == 0 && synced
    }

    /// Writes `bytes` under `temporary`, fsynced, then renames it to `path`: whole or not
    /// at all; nothing is left under `temporary` either way. On failure `errno` says why.
    public static func write(_ path: String, _ bytes: [UInt8], temporary: String) -> Bool {
        guard writeDurably(temporary, bytes), rename(temporary, path) == 0 else {
            let why = errno
            unlink(temporary)
            errno = why
            return false
        }
        return true
    }
}
