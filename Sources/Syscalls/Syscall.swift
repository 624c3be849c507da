import Glibc

/// An OS error: the call that failed and its errno.
public struct SystemError: Error, CustomStringConvertible, Sendable {
    public let call: String
    public let errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

/// System calls, with EINTR retried in this one place for every Swift target of Aspect
/// (as swift-nio's `System.swift` does). C code calls back into nothing here: the two C
/// loops that retry by themselves run inside a library's callbacks, libvips' read callback
/// in CVips and libcurl's write callback in CCurl.
public enum Syscall {
    /// Runs `body` until it does not fail with EINTR; a negative result becomes an error.
    // @inlinable, as every generic here: called across modules, an unspecialised generic
    // costs a few hundred instructions a call on the hit path (callgrind).
    @inlinable @discardableResult
    public static func retrying<T: BinaryInteger>(_ call: String, _ body: () -> T) throws(SystemError) -> T {
        while true {
            let r = body()
            if r >= 0 { return r }
            if errno == EINTR { continue }
            throw SystemError(call: call, errno: errno)
        }
    }

    /// Like `retrying`, but EAGAIN is `nil` rather than an error (non-blocking I/O).
    @inlinable
    public static func nonBlocking<T: BinaryInteger>(_ call: String, _ body: () -> T) throws(SystemError) -> T? {
        while true {
            let r = body()
            if r >= 0 { return r }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
            throw SystemError(call: call, errno: errno)
        }
    }

    /// Writes all of `bytes` to a blocking descriptor, through short writes.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let n = try retrying("write") { write(fd, bytes.baseAddress?.advanced(by: offset), bytes.count - offset) }
            if n == 0 { throw SystemError(call: "write", errno: EIO) }
            offset += n
        }
    }
}

/// Monotonic and wall clocks.
public enum Clock {
    /// Nanoseconds on the monotonic clock.
    @inlinable
    public static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    public static func wallSeconds() -> Int { Int(time(nil)) }
}
