import Foundation
import Glibc
import HTTP
import HTTPServer
import Syscalls

/// A blocking loopback client: real sockets, for the server tests.
public final class TestClient {
    public let fd: Int32
    private var buffer: [UInt8] = []

    public struct Response: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// `receiveBuffer`: the socket's receive buffer, set before the connection (a client
    /// that reads slowly fills a small one soon).
    public init(port: Int, timeoutSeconds: Int = 10, receiveBuffer: Int? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var tv = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard ok == 0 else {
            Glibc.close(fd)
            throw TestError("connect: \(String(cString: strerror(errno)))")
        }
    }

    deinit { Glibc.close(fd) }

    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                raw.baseAddress.map { Glibc.send(fd, $0 + offset, raw.count - offset, Int32(MSG_NOSIGNAL)) } ?? -1
            }
            guard n > 0 else { throw TestError("send: \(String(cString: strerror(errno)))") }
            offset += n
        }
    }

    /// Reads more bytes; false at EOF.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 { throw TestError("recv: \(String(cString: strerror(errno)))") }
        if n == 0 { return false }
        buffer += chunk[0..<n]
        return true
    }

    /// Reads one response (`head` true: no body follows, as for HEAD).
    public func response(head: Bool = false) throws -> Response {
        let crlf2: [UInt8] = [13, 10, 13, 10]
        var end: Int?
        while end == nil {
            if let i = find(crlf2) { end = i } else if try !fill() { throw TestError("EOF before a response head") }
        }
        let headEnd = end ?? 0
        let lines = String(decoding: buffer[0..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(lines[0].split(separator: " ")[1]) ?? 0
        var headers: [String: String] = [:]
        for l in lines.dropFirst() {
            if let c = l.firstIndex(of: ":") {
                headers[l[..<c].lowercased()] = l[l.index(after: c)...].trimmingCharacters(in: .whitespaces)
            }
        }
        buffer.removeFirst(headEnd + 4)
        let length = head || status == 304 ? 0 : Int(headers["content-length"] ?? "0") ?? 0
        while buffer.count < length {
            if try !fill() { throw TestError("EOF in a body") }
        }
        let body = Array(buffer[0..<length])
        buffer.removeFirst(length)
        return Response(status: status, headers: headers, body: body)
    }

    /// Whether anything (an answer, or EOF) has arrived and not been read, now.
    public var hasInput: Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return !buffer.isEmpty || poll(&p, 1, 0) > 0
    }

    /// Whether the server closes the connection (EOF) within the read timeout.
    public func closedByPeer() -> Bool {
        (try? fill()) == false
    }

    /// Reads and drops what arrives until the peer closes or resets (true), or `seconds`
    /// pass with the connection still open (false).
    public func closedByPeer(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var chunk = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n == 0 { return true }
            if n < 0 {
                guard errno == EAGAIN || errno == EWOULDBLOCK else { return true }
                usleep(10_000)
            }
        }
        return false
    }

    private func find(_ needle: [UInt8]) -> Int? {
        guard buffer.count >= needle.count else { return nil }
        for i in 0...(buffer.count - needle.count) where buffer[i..<i + needle.count].elementsEqual(needle) { return i }
        return nil
    }

    public static func get(_ path: String, host: String = "x") -> String {
        "GET \(path) HTTP/1.1\r\nHost: \(host)\r\n\r\n"
    }
}

public struct TestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}

/// A handler for the server tests: small routes with known answers.
public struct TestHandler: HTTPHandler {
    public init() {}

    public func route(_ request: HTTPRequestHead, context: RequestContext) -> Route {
        guard request.method == "GET" || request.method == "HEAD" else {
            var r = HTTPResponse.error(405, code: "method_not_allowed", message: "use GET or HEAD")
            r.headers.append("Allow", "GET, HEAD")
            return .respond(r)
        }
        switch request.path {
        case "/hello": return .respond(.text(200, "hello"))
        case "/echo": return .respond(.text(200, request.query))
        case "/readyz": return .respond(context.draining ? .text(503, "draining") : .text(200, "ready"))
        case "/big":
            let n = Int(request.query) ?? 1 << 20
            return .respond(HTTPResponse(status: 200, body: .bytes([UInt8](repeating: 0x61, count: n))))
        case "/slow":
            let ms = Int(request.query) ?? 100
            return .work {
                usleep(UInt32(ms * 1000))
                return .text(200, "slept \(ms)")
            }
        case "/deferred":
            // Answered from another thread after `ms`, holding no worker meanwhile; with
            // `then=work`, handed to the pool after the wait.
            let (ms, thenWork) = (
                Int(request.query.split(separator: "&").first ?? "") ?? 100, request.query.hasSuffix("then=work")
            )
            return .deferred { responder in
                Thread {
                    usleep(UInt32(ms * 1000))
                    if thenWork {
                        responder.work { .text(200, "waited \(ms), then worked") }
                    } else {
                        responder.respond(.text(200, "waited \(ms)"))
                    }
                }.start()
            }
        case "/file":
            guard case .success(let file) = OpenFile.open(request.query) else {
                return .respond(.error(404, code: "not_found", message: "no file"))
            }
            var st = stat()
            fstat(file.fd, &st)
            return .respond(HTTPResponse(status: 200, body: .file(file, offset: 0, length: Int64(st.st_size))))
        default:
            return .respond(.error(404, code: "not_found", message: "no such route"))
        }
    }
}

/// A server on a free loopback port, running on its own thread until `stop()`.
public final class RunningServer: Sendable {
    public let server: HTTPServer
    private let done = DispatchSemaphore(value: 0)

    public init(_ configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        var c = ServerConfiguration()
        c.port = 0
        c.accessLog = false
        c.workers = 2
        configure(&c)
        server = try HTTPServer(configuration: c, handler: TestHandler())
        let (s, d) = (server, done)
        Thread {
            s.run()
            d.signal()
        }.start()
    }

    public var port: Int { server.port }

    /// Drains and waits for `run()` to return; false if it did not in `seconds`.
    @discardableResult
    public func stop(seconds: Int = 15) -> Bool {
        server.shutdown()
        return done.wait(timeout: .now() + .seconds(seconds)) == .success
    }
}
