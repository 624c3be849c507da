import Glibc

/// An OS error: the call that failed and its errno.
public struct SystemError: Error, CustomStringConvertible, Sendable {
    public let call: String
    public let errno: Int32

    public var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

/// System calls, with EINTR retried in this one place.
enum Syscall {
    /// Runs `body` until it does not fail with EINTR; a negative result becomes an error.
    @discardableResult
    static func retrying<T: BinaryInteger>(_ call: String, _ body: () -> T) throws(SystemError) -> T {
        while true {
            let r = body()
            if r >= 0 { return r }
            if errno == EINTR { continue }
            throw SystemError(call: call, errno: errno)
        }
    }

    /// Like `retrying`, but EAGAIN is `nil` rather than an error (non-blocking I/O).
    static func nonBlocking<T: BinaryInteger>(_ call: String, _ body: () -> T) throws(SystemError) -> T? {
        while true {
            let r = body()
            if r >= 0 { return r }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
            throw SystemError(call: call, errno: errno)
        }
    }
}

/// Monotonic and wall clocks.
enum Clock {
    /// Nanoseconds on the monotonic clock.
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    static func wallSeconds() -> Int { Int(time(nil)) }
}
