import Glibc

/// Raises this process's soft limit on open files to `n` (up to the hard limit), for tests
/// that hold many connections.
public func raiseFileLimit(_ n: UInt) {
    var l = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &l)
    if l.rlim_cur < rlim_t(n) {
        l.rlim_cur = min(rlim_t(n), l.rlim_max)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &l)
    }
}
