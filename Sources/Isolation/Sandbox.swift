internal import CSandbox
import Foundation
import Glibc

/// A render worker's lock-down (SPEC: Isolation), the calls of CSandbox said once here:
/// Landlock while the process is one thread, then its limits, no capability, no new
/// privileges and the seccomp allowlist. docs/security.md says what each step takes away.
public enum Sandbox {
    /// What a worker may read once restricted: the system's libraries and data (libvips'
    /// modules, fonts, poppler's data, locales), fontconfig's configuration and cache, the
    /// processor count, and its own `/proc` entry. Nothing else: not the image root, the
    /// cache, the configuration, `/tmp`, `/etc/passwd` or another process.
    public static let readable = [
        "/usr", "/lib", "/lib64", "/etc/fonts", "/etc/ld.so.cache", "/etc/localtime", "/var/cache/fontconfig",
        "/sys/devices/system/cpu", "/proc/self",
    ]

    /// Descriptors a worker may hold at once: its four, a job's source and answer, and
    /// what its libraries keep open.
    public static let descriptorLimit: UInt64 = 128

    /// A step of the lock-down that failed, in words for the log.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The process dies with its parent, and its parent is `parent` (a worker whose
    /// service died before the death signal was set was handed to init, and must end).
    public static func dieWith(parent: Int32) -> Bool {
        csandbox_die_with_parent() == 0 && getppid() == parent
    }

    /// Landlock over `readable` (read-only, nothing written, no TCP, no signal out), for
    /// this thread and every one started after it: the ABI it holds (0: the kernel has
    /// none), or a negative errno.
    public static func landlock() -> Int32 {
        let paths = readable.map { strdup($0) }
        defer { for p in paths { free(p) } }
        return paths.map { UnsafePointer($0) }.withUnsafeBufferPointer {
            csandbox_landlock($0.baseAddress, Int32($0.count))
        }
    }

    /// Dies with its parent, its limits (`memoryBytes` of address space, files no larger
    /// than an answer of `resultBytes`, a few descriptors, no core), no capability, then no
    /// new privileges and the seccomp allowlist. `parent`: the service's pid (it may be
    /// pid 1 itself, in a container).
    public static func lock(memoryBytes: Int64, resultBytes: Int64, parent: Int32) -> Result<Void, Failure> {
        guard dieWith(parent: parent) else { return .failure(Failure(description: "its parent is gone")) }
        // An answer is a result and its facts: a file larger than that is never written.
        let fileSize = UInt64(max(0, resultBytes)) + (2 << 20)
        guard csandbox_limits(UInt64(max(0, memoryBytes)), fileSize, descriptorLimit) == 0 else {
            return .failure(Failure(description: "setrlimit: \(String(cString: strerror(errno)))"))
        }
        let dropped = csandbox_drop_capabilities()
        guard dropped == 0 else {
            return .failure(Failure(description: "dropping capabilities: \(String(cString: strerror(-dropped)))"))
        }
        let r = csandbox_lock()
        guard r == 0 else {
            return .failure(
                Failure(description: "the seccomp filter cannot be installed: \(String(cString: strerror(-r)))"))
        }
        return .success(())
    }

    /// A soft limit of `seconds` of CPU from now: a render that spins is stopped by the
    /// kernel too, if the service cannot.
    public static func cpuBudget(seconds: UInt64) { _ = csandbox_cpu_budget(seconds) }

    /// A memfd that can be sealed, or -1.
    public static func sealableMemfd(_ name: String) -> Int32 { csandbox_sealable_memfd(name) }

    #if DEBUG
        /// What a test's attacking worker tries that Glibc does not import: each the
        /// call's result, negative when refused (with `errno` set).
        public enum Probe {
            public static func sigqueue(_ pid: Int32) -> Int32 { csandbox_try_sigqueue(pid) }
            public static func setaffinity(_ pid: Int32) -> Int32 { csandbox_try_setaffinity(pid) }
            public static func userfaultfd() -> Int32 { csandbox_try_userfaultfd() }
            public static func pipe(_ ends: inout [Int32]) -> Int32 { csandbox_pipe(&ends) }
        }
    #endif
}
