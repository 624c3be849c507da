import Foundation
import Glibc
import Synchronization

/// An HTTP origin on loopback for the source tests, a thread per connection, that serves
/// files and misbehaves on request, by the first segment of the path:
///   /files/NAME            the file, with an ETag; If-None-Match → 304
///   /status/CODE/NAME      that status, a short body
///   /redirect/N/NAME       302 to /redirect/N-1/NAME, at 0 to /files/NAME (same host)
///   /away/NAME             302 to the same file on another host name (localhost)
///   /loop/NAME             302 to itself
///   /stall-head/NAME       reads the request, never answers
///   /drip/NAME             the head, then one byte a second
///   /no-304/NAME           as /files, but the whole file even when If-None-Match matches
///   /stall-body/NAME       the head and half the file, then nothing
///   /close-mid/NAME        the head and half the file, then closes
///   /over-length/NAME      Content-Length of the file, then the file and 1000 bytes more
///   /endless/NAME          no Content-Length, bytes until the client goes (Connection: close)
/// Every request is logged (method, path, If-None-Match), so tests count downloads.
public final class TestOrigin: @unchecked Sendable {
    public let port: Int
    private let listenFD: Int32
    private let state = Mutex(State())
    private let running = Atomic<Bool>(true)

    struct State {
        var files: [String: (bytes: [UInt8], etag: String)] = [:]
        var log: [String] = []
        var open: [Int32] = []
        var accepted = 0
    }

    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 512) == 0 else { throw TestError("the test origin cannot listen") }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        port = Int(UInt16(bigEndian: addr.sin_port))
        listenFD = fd
        let t = Thread { [self] in acceptLoop() }
        t.start()
    }

    /// The base URL to use as `images.root`.
    public var base: String { "http://127.0.0.1:\(port)/" }

    /// Serves `bytes` as /files/NAME (and the other routes' NAME), with a new ETag, or
    /// with `etag` (an origin that changes the bytes under one ETag passes the old one).
    public func put(_ name: String, _ bytes: [UInt8], etag: String? = nil) {
        let tag = etag ?? "\"\(name)-\(bytes.count)-\(UUID().uuidString.prefix(8))\""
        state.withLock { $0.files[name] = (bytes, tag) }
    }

    /// The ETag /files/NAME is served with.
    public func etag(_ name: String) -> String? { state.withLock { $0.files[name]?.etag } }

    /// The requests seen so far: "GET /files/a.jpg" (with " if-none-match" for a conditional one).
    public var log: [String] { state.withLock { $0.log } }

    /// Connections accepted so far, whether or not they sent a request.
    public var connections: Int { state.withLock { $0.accepted } }

    /// How many requests asked for `path`; `conditional` counts only those with If-None-Match.
    public func requests(_ path: String, conditional: Bool = false) -> Int {
        log.filter {
            let p = $0.split(separator: " ")
            return p.count > 1 && p[1] == path && (!conditional || p.count > 2)
        }.count
    }

    /// Stops accepting and closes every connection held (stalled ones included).
    /// Idempotent: a descriptor closed twice could be another test's by then.
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        // Shut down, not closed: the accept thread closes it as it leaves, so the number is
        // never reused while that thread may still call accept(2) on it.
        shutdown(listenFD, Int32(SHUT_RDWR))
        // Under the lock that `serve` closes them under: only descriptors still ours.
        state.withLock { for fd in $0.open { shutdown(fd, Int32(SHUT_RDWR)) } }
    }

    deinit { stop() }

    private func acceptLoop() {
        defer { close(listenFD) }
        while running.load(ordering: .relaxed) {
            let c = accept(listenFD, nil, nil)
            if c < 0 {
                if errno == EINTR { continue }
                return
            }
            guard running.load(ordering: .relaxed) else {
                close(c)
                return
            }
            state.withLock {
                $0.open.append(c)
                $0.accepted += 1
            }
            Thread { [self] in serve(c) }.start()
        }
    }

    private func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            off += n
        }
        return true
    }

    private func head(_ status: Int, _ headers: [(String, String)]) -> [UInt8] {
        Array(("HTTP/1.1 \(status) X\r\n" + headers.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n").utf8)
    }

    private func serve(_ fd: Int32) {
        defer {
            state.withLock { s in
                s.open.removeAll { $0 == fd }
                close(fd)
            }
        }
        var buffer: [UInt8] = []
        while true {
            // One request head (no bodies: every request here is a GET).
            var found = buffer.firstRange(of: Array("\r\n\r\n".utf8))
            while found == nil {
                if !read(fd, &buffer) { return }
                found = buffer.firstRange(of: Array("\r\n\r\n".utf8))
            }
            guard let end = found else { return }
            let text = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
            buffer.removeSubrange(..<end.upperBound)
            let lines = text.components(separatedBy: "\r\n")
            let parts = lines.first?.split(separator: " ") ?? []
            guard parts.count >= 2 else { return }
            let path = String(parts[1])
            let ifNoneMatch = lines.dropFirst().first { $0.lowercased().hasPrefix("if-none-match:") }
                .map { String($0.dropFirst("if-none-match:".count)).trimmingCharacters(in: .whitespaces) }
            state.withLock { $0.log.append("\(parts[0]) \(path)" + (ifNoneMatch == nil ? "" : " if-none-match")) }
            if !answer(fd, path: path, ifNoneMatch: ifNoneMatch) { return }
        }
    }

    private func read(_ fd: Int32, _ buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        let n = recv(fd, &chunk, chunk.count, 0)
        guard n > 0 else { return false }
        buffer += chunk[0..<n]
        return true
    }

    /// False when the connection is done with.
    private func answer(_ fd: Int32, path: String, ifNoneMatch: String?) -> Bool {
        let segments = path.split(separator: "/").map(String.init)
        guard let route = segments.first else { return send(fd, head(404, [("Content-Length", "0")])) }
        let name =
            segments.dropFirst(route == "status" || route == "redirect" ? 2 : 1).joined(separator: "/")
            .removingPercentEncoding ?? ""
        let file = state.withLock { $0.files[name] }
        let bytes = file?.bytes ?? []
        func plain(_ status: Int, _ body: String, _ extra: [(String, String)] = []) -> Bool {
            send(fd, head(status, [("Content-Length", "\(body.utf8.count)")] + extra) + Array(body.utf8))
        }
        switch route {
        case "files", "no-304":
            guard let file else { return plain(404, "not found") }
            if route == "files", ifNoneMatch == file.etag { return send(fd, head(304, [("ETag", file.etag)])) }
            return send(
                fd,
                head(200, [("Content-Length", "\(bytes.count)"), ("ETag", file.etag), ("Content-Type", "image/jpeg")])
                    + bytes)
        case "status":
            return plain(Int(segments.dropFirst().first ?? "") ?? 500, "<Error><Code>Test</Code></Error>")
        case "redirect":
            let n = Int(segments.dropFirst().first ?? "") ?? 0
            let to = n <= 0 ? "/files/\(name)" : "/redirect/\(n - 1)/\(name)"
            return plain(302, "", [("Location", to)])
        case "away":
            return plain(302, "", [("Location", "http://localhost:\(port)/files/\(name)")])
        case "loop":
            return plain(302, "", [("Location", path)])
        case "stall-head":
            while running.load(ordering: .relaxed) { sleep(1) }
            return false
        case "drip":
            // The head, then one byte of the file a second: a stalled origin that is not silent.
            guard send(fd, head(200, [("Content-Length", "\(bytes.count)")])) else { return false }
            for b in bytes {
                guard running.load(ordering: .relaxed), send(fd, [b]) else { return false }
                sleep(1)
            }
            return false
        case "stall-body", "close-mid":
            _ = send(fd, head(200, [("Content-Length", "\(bytes.count)")]) + Array(bytes.prefix(bytes.count / 2)))
            if route == "stall-body" { while running.load(ordering: .relaxed) { sleep(1) } }
            return false
        case "over-length":
            _ = send(
                fd, head(200, [("Content-Length", "\(bytes.count)")]) + bytes + [UInt8](repeating: 0x41, count: 1000))
            return false
        case "endless":
            guard send(fd, head(200, [("Connection", "close")])) else { return false }
            let chunk = [UInt8](repeating: 0x42, count: 65_536)
            while running.load(ordering: .relaxed), send(fd, chunk) {}
            return false
        default:
            return plain(404, "no such route")
        }
    }
}
