import Configuration
import Core
import Foundation
import Glibc

/// `aspect healthcheck`: asks the running service's `/healthz` (where the same
/// configuration says it listens) and exits 0 when it answers `200 ok`, 1 otherwise. For
/// container health checks, so an image needs no curl.
enum HealthcheckCommand {
    /// How long the whole check may take.
    static let timeoutSeconds = 3

    static func run(_ args: [String]) -> Int32 {
        let config: Config
        switch ConfigCommand.load(args) {
        case .invalid: return 2
        case .help:
            print("Usage: aspect healthcheck [the flags of aspect serve]\n\n" + Usage.serve)
            return 0
        case .loaded(let c): config = c
        }
        // A service listening on every address is asked on loopback.
        let host = ["0.0.0.0", "::", ""].contains(config.server.host) ? "127.0.0.1" : config.server.host
        switch ask(host: host, port: config.server.port) {
        case .success:
            return 0
        case .failure(let problem):
            Console.error("aspect healthcheck: http://\(host):\(config.server.port)/healthz: \(problem)")
            return 1
        }
    }

    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    /// GET /healthz over a fresh connection; success when the answer is 200.
    static func ask(host: String, port: Int) -> Result<Void, Problem> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            return .failure(Problem(description: "cannot resolve \(host)"))
        }
        defer { freeaddrinfo(list) }
        let fd = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard fd >= 0 else { return .failure(Problem(description: "no socket: \(String(cString: strerror(errno)))")) }
        defer { close(fd) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            return .failure(Problem(description: "cannot connect: \(String(cString: strerror(errno)))"))
        }
        let request = Array("GET /healthz HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count
        else {
            return .failure(Problem(description: "cannot send: \(String(cString: strerror(errno)))"))
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while answer.count < 4096 {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            answer += buffer[0..<n]
        }
        let text = String(decoding: answer, as: UTF8.self)
        guard let statusLine = text.split(separator: "\r\n").first, !statusLine.isEmpty else {
            return .failure(Problem(description: "no answer within \(timeoutSeconds) s"))
        }
        guard statusLine.hasPrefix("HTTP/1.1 200") else {
            return .failure(Problem(description: "answered \(statusLine)"))
        }
        return .success(())
    }
}
