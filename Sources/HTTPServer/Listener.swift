import Glibc
import Syscalls

/// The listening socket.
enum Listener {
    /// A non-blocking socket bound to host:port and listening; the port it got.
    static func open(host: String, port: Int) throws(SystemError) -> (Int32, Int) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, "\(port)", &hints, &list)
        guard rc == 0, let first = list else { throw SystemError(call: "getaddrinfo \(host)", errno: EADDRNOTAVAIL) }
        defer { freeaddrinfo(list) }
        var lastError = SystemError(call: "bind \(host):\(port)", errno: EADDRNOTAVAIL)
        var ai: UnsafeMutablePointer<addrinfo>? = first
        while let a = ai {
            ai = a.pointee.ai_next
            let fd = socket(
                a.pointee.ai_family,
                Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            if fd < 0 { continue }
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            // Every answer is written whole: no Nagle delay. Accepted sockets inherit it
            // (Linux), one system call fewer per connection.
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if bind(fd, a.pointee.ai_addr, a.pointee.ai_addrlen) != 0 || listen(fd, 1024) != 0 {
                lastError = SystemError(call: "bind \(host):\(port)", errno: errno)
                Glibc.close(fd)
                continue
            }
            return (fd, boundPort(fd) ?? port)
        }
        throw lastError
    }

    private static func boundPort(_ fd: Int32) -> Int? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin6_port))
                }
            }
        default:
            return nil
        }
    }
}
