import Core
import Glibc

/// An incremental HTTP/1.1 request parser: a state machine fed bytes as they arrive, in
/// pieces of any size, that stops after each whole request so pipelined requests are
/// answered in order. It does no I/O.
///
/// RFC 9112's rules that prevent request smuggling are errors that close the connection:
/// whitespace before a header's colon, obs-fold, NUL or CR in a value, both
/// `Content-Length` and `Transfer-Encoding`, or several different `Content-Length`s.
public struct RequestParser: Sendable {
    public enum Result: Sendable, Equatable {
        /// The bytes so far are the start of a request: feed more.
        case needMore
        /// A whole request, its body (if any) read and dropped.
        case request(HTTPRequestHead)
        /// The request cannot be parsed: answer with the error and close.
        case failure(HTTPError)
    }

    private enum State: Sendable {
        case requestLine
        case headers
        case body(remaining: Int)
        case failed
    }

    public let limits: ParserLimits
    private var state = State.requestLine
    private var line: [UInt8] = []
    private var headerBytes = 0
    private var emptyLinesBefore = 0
    private var requestLine: (method: String, target: String, minor: Int)?
    private var headers = HTTPHeaders()
    private var pending: HTTPRequestHead?

    public init(limits: ParserLimits = ParserLimits()) { self.limits = limits }

    /// Whether nothing of a next request has arrived yet (for idle vs header timeouts).
    public var isIdle: Bool {
        if case .requestLine = state { return line.isEmpty }
        return false
    }

    /// Consumes `bytes` up to the end of one request (or an error), and says how many
    /// bytes it took; the rest belong to the next request.
    public mutating func parse(_ bytes: UnsafeRawBufferPointer) -> (consumed: Int, result: Result) {
        var i = 0
        while i < bytes.count {
            switch state {
            case .failed:
                return (i, .failure(.badRequest("the connection is closing")))
            case .body(let remaining):
                let take = min(remaining, bytes.count - i)
                i += take
                if take == remaining {
                    return (i, finish())
                }
                state = .body(remaining: remaining - take)
            case .requestLine, .headers:
                // A whole line at a time where it has arrived (read in place, not copied),
                // a piece kept in `line` where it has not.
                let rest = UnsafeRawBufferPointer(rebasing: bytes[i...])
                guard let base = rest.baseAddress, let found = memchr(base, 0x0A, rest.count) else {
                    line.append(contentsOf: rest)
                    i = bytes.count
                    if let e = checkLineLength(line.count) { return (i, fail(e)) }
                    // A line still arriving is checked as it comes: bytes that cannot start
                    // a request line (a TLS hello, bare CRs) are answered now, not at the
                    // header timeout.
                    if case .requestLine = state, !RequestLine.canStart(line) { return (i, fail(.notHTTP)) }
                    continue
                }
                let lf = UnsafeRawPointer(found) - base
                i += lf + 1
                if line.isEmpty {
                    let l = Self.withoutCR(UnsafeRawBufferPointer(rebasing: rest[..<lf]))
                    if let e = checkLineLength(l.count) { return (i, fail(e)) }
                    if let r = takeLine(l) { return (i, r) }
                } else {
                    line.append(contentsOf: rest[..<lf])
                    let complete = line
                    line.removeAll(keepingCapacity: true)
                    let r = complete.withUnsafeBytes { raw -> Result? in
                        let l = Self.withoutCR(raw)
                        if let e = checkLineLength(l.count) { return fail(e) }
                        return takeLine(l)
                    }
                    if let r { return (i, r) }
                }
            }
        }
        return (i, .needMore)
    }

    /// Convenience for tests and small inputs.
    public mutating func parse(_ bytes: [UInt8]) -> (consumed: Int, result: Result) {
        bytes.withUnsafeBytes { parse($0) }
    }

    /// A line without the CR of its CRLF (a bare LF ends a line too).
    private static func withoutCR(_ l: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        l.last == UInt8(ascii: "\r") ? UnsafeRawBufferPointer(rebasing: l.dropLast()) : l
    }

    private mutating func checkLineLength(_ count: Int) -> HTTPError? {
        switch state {
        case .requestLine where count > limits.maxTargetBytes + 32:
            return HTTPError(414, "uri_too_long", "the request target is longer than \(limits.maxTargetBytes) bytes")
        case .headers where headerBytes + count > limits.maxHeaderBytes:
            return headersTooLarge()
        default:
            return nil
        }
    }

    private func headersTooLarge() -> HTTPError {
        HTTPError(
            431, "headers_too_large",
            "the request's headers are over \(limits.maxHeaderBytes) bytes or \(limits.maxHeaderCount) fields")
    }

    private mutating func fail(_ e: HTTPError) -> Result {
        state = .failed
        return .failure(e)
    }

    /// One line, without its line end.
    private mutating func takeLine(_ l: UnsafeRawBufferPointer) -> Result? {
        switch state {
        case .requestLine:
            if l.isEmpty {
                // RFC 9112 §2.2: empty lines before a request line are ignored (a few).
                emptyLinesBefore += 1
                return emptyLinesBefore > 8 ? fail(.badRequest("expected a request line")) : nil
            }
            switch RequestLine.parse(l, limits: limits) {
            case .success(let r):
                requestLine = r
                state = .headers
                return nil
            case .failure(let e):
                return fail(e)
            }
        case .headers:
            if l.isEmpty { return endOfHead() }
            headerBytes += l.count + 2
            guard headers.count < limits.maxHeaderCount else { return fail(headersTooLarge()) }
            switch FieldLine.parse(l) {
            case .success(let (name, value)):
                headers.append(name, value)
                return nil
            case .failure(let e):
                return fail(e)
            }
        case .body, .failed:
            return nil
        }
    }

    private mutating func endOfHead() -> Result? {
        guard let (method, target, minor) = requestLine else { return fail(.badRequest("expected a request line")) }
        // One pass over the fields for what framing and routing need.
        var hosts = 0
        var transferEncoding = false
        var close = false
        var lengths: [Substring] = []
        for f in headers.fields {
            switch f.name.utf8.count {
            case 4 where HTTPHeaders.equalNames(f.name, "Host"): hosts += 1
            case 10 where HTTPHeaders.equalNames(f.name, "Connection"):
                if f.value.split(separator: ",").contains(where: { HTTPHeaders.equalNames(trimmed($0), "close") }) {
                    close = true
                }
            case 14 where HTTPHeaders.equalNames(f.name, "Content-Length"):
                lengths += f.value.split(separator: ",", omittingEmptySubsequences: false)
            case 17 where HTTPHeaders.equalNames(f.name, "Transfer-Encoding"): transferEncoding = true
            default: break
            }
        }
        if minor == 1, hosts != 1 {
            return fail(.badRequest("an HTTP/1.1 request needs exactly one Host header"))
        }
        if transferEncoding {
            // No request body is expected here; with Content-Length too it is a classic
            // smuggling vector. Either way: refuse and close.
            return fail(.badRequest("Transfer-Encoding is not accepted on requests to this service"))
        }
        var length = 0
        if !lengths.isEmpty {
            let values = Set(lengths.map { trimmed($0) })
            guard values.count == 1, let only = values.first, !only.isEmpty, only.count <= 18,
                only.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(only)
            else {
                return fail(.badRequest("Content-Length must be one non-negative integer"))
            }
            length = n
        }
        guard length <= limits.maxBodyBytes else {
            return fail(
                HTTPError(413, "body_too_large", "a request body over \(limits.maxBodyBytes) bytes is not read"))
        }
        let parsedTarget: (path: String, query: String)
        switch Target.parse(target) {
        case .success(let t): parsedTarget = t
        case .failure(let e): return fail(e)
        }
        let keepAlive = minor == 1 && !close
        pending = HTTPRequestHead(
            method: method, target: target, path: parsedTarget.path, query: parsedTarget.query, minorVersion: minor,
            headers: headers, keepAlive: keepAlive)
        if length > 0 {
            state = .body(remaining: length)
            return nil
        }
        return finish()
    }

    private mutating func finish() -> Result {
        let head = pending.take()
        reset()
        guard let head else { return fail(.badRequest("expected a request line")) }
        return .request(head)
    }

    private mutating func reset() {
        state = .requestLine
        line.removeAll(keepingCapacity: true)
        headerBytes = 0
        emptyLinesBefore = 0
        requestLine = nil
        headers = HTTPHeaders()
        pending = nil
    }
}

/// `method SP target SP HTTP/1.x`.
enum RequestLine {
    /// The longest method taken as plausible while a request line is still arriving.
    static let maxMethodBytes = 32

    /// Whether `partial`, the start of a line with no LF yet, can still become a request
    /// line (or the empty line before one): a CR only as its last byte, and a method of
    /// token characters up to the first space.
    static func canStart(_ partial: [UInt8]) -> Bool {
        if let cr = partial.firstIndex(of: 0x0D), cr != partial.count - 1 { return false }
        if partial == [0x0D] { return true }
        let method = partial.prefix { $0 != UInt8(ascii: " ") }
        guard method.count <= maxMethodBytes else { return false }
        return method.allSatisfy { Token.isTChar($0) || $0 == 0x0D }
    }

    static func parse(_ l: UnsafeRawBufferPointer, limits: ParserLimits)
        -> Swift.Result<(String, String, Int), HTTPError>
    {
        let space = UInt8(ascii: " ")
        guard let firstSpace = l.firstIndex(of: space), let lastSpace = l.lastIndex(of: space),
            firstSpace < lastSpace
        else {
            return .failure(.badRequest("the request line must be METHOD TARGET HTTP/1.1"))
        }
        let method = l[..<firstSpace]
        let target = l[(firstSpace + 1)..<lastSpace]
        let version = l[(lastSpace + 1)...]
        guard !method.isEmpty, method.allSatisfy(Token.isTChar), !target.isEmpty else {
            return .failure(.badRequest("the request line must be METHOD TARGET HTTP/1.1"))
        }
        guard target.count <= limits.maxTargetBytes else {
            return .failure(
                HTTPError(414, "uri_too_long", "the request target is longer than \(limits.maxTargetBytes) bytes"))
        }
        // Visible ASCII only: no space, control or 8-bit byte.
        guard target.allSatisfy({ $0 &- 0x21 < 0x5E }) else {
            return .failure(.badRequest("the request target has a byte that must be percent-encoded"))
        }
        let minor: Int
        if version.elementsEqual("HTTP/1.1".utf8) {
            minor = 1
        } else if version.elementsEqual("HTTP/1.0".utf8) {
            minor = 0
        } else if version.count == 8, version.starts(with: "HTTP/".utf8) {
            return .failure(HTTPError(505, "version_not_supported", "only HTTP/1.0 and HTTP/1.1 are served"))
        } else {
            return .failure(.badRequest("the request line must end in HTTP/1.1 or HTTP/1.0"))
        }
        return .success((String(decoding: method, as: UTF8.self), String(decoding: target, as: UTF8.self), minor))
    }
}

/// `name: value`, with RFC 9112 §5's rules.
enum FieldLine {
    static func parse(_ l: UnsafeRawBufferPointer) -> Swift.Result<(String, String), HTTPError> {
        guard let first = l.first, first != UInt8(ascii: " "), first != UInt8(ascii: "\t") else {
            return .failure(.badRequest("obsolete line folding in headers is not accepted"))
        }
        guard let colon = l.firstIndex(of: UInt8(ascii: ":")) else {
            return .failure(.badRequest("a header line has no colon"))
        }
        let name = l[..<colon]
        guard !name.isEmpty, name.allSatisfy(Token.isTChar) else {
            return .failure(.badRequest("a header name is empty or has whitespace or a separator (before its colon?)"))
        }
        var value = l[(colon + 1)...]
        while let f = value.first, f == 0x20 || f == 0x09 { value = value.dropFirst() }
        while let e = value.last, e == 0x20 || e == 0x09 { value = value.dropLast() }
        // Below 0x0E only NUL, CR and LF are refused (tab and the rest pass), in one
        // comparison per byte for the common case.
        guard !value.contains(where: { $0 < 0x0E && ($0 == 0 || $0 == 0x0D || $0 == 0x0A) }) else {
            return .failure(.badRequest("a header value contains NUL or CR"))
        }
        return .success((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
    }
}

enum Token {
    /// RFC 9110's tchar.
    static func isTChar(_ c: UInt8) -> Bool {
        // A bit per byte below 128: one shift and test rather than a chain of ranges.
        c < 64 ? (low >> UInt64(c)) & 1 == 1 : c < 128 && (high >> UInt64(c - 64)) & 1 == 1
    }

    /// tchar's bits for bytes 0–63 (digits and `!#$%&'*+-.`) and 64–127 (letters and
    /// `^_`|~`); `RequestParserTests` checks them against RFC 9110's list.
    static let low: UInt64 = 0x03FF_6CFA_0000_0000
    static let high: UInt64 = 0x57FF_FFFF_C7FF_FFFE
}

/// The request target: origin-form (`/path?query`), absolute-form
/// (`http://host/path?query`) or `*`.
enum Target {
    static func parse(_ target: String) -> Swift.Result<(path: String, query: String), HTTPError> {
        var target = target
        return target.withUTF8 { parse(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// On the target's bytes, found with memchr: it is ASCII (the request line allows no
    /// other byte), and it is on every request's path.
    private static func parse(bytes all: UnsafeRawBufferPointer)
        -> Swift.Result<(path: String, query: String), HTTPError>
    {
        func find(_ byte: UInt8, _ b: UnsafeRawBufferPointer) -> Int? {
            guard let base = b.baseAddress, let hit = memchr(base, Int32(byte), b.count) else { return nil }
            return UnsafeRawPointer(hit) - base
        }
        var bytes = all
        if let hash = find(UInt8(ascii: "#"), bytes) { bytes = UnsafeRawBufferPointer(rebasing: bytes[..<hash]) }
        if bytes.count == 1, bytes[0] == UInt8(ascii: "*") { return .success(("*", "")) }
        if bytes.first != UInt8(ascii: "/") {
            let lower = String(decoding: bytes.prefix(8), as: UTF8.self).lowercased()
            let scheme = lower.hasPrefix("http://") ? 7 : lower.hasPrefix("https://") ? 8 : 0
            guard scheme > 0 else { return .failure(.badRequest("the request target must start with '/'")) }
            let afterScheme = UnsafeRawBufferPointer(rebasing: bytes[scheme...])
            guard let start = afterScheme.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") })
            else { return .success(("/", "")) }
            bytes = UnsafeRawBufferPointer(rebasing: afterScheme[start...])
        }
        let path: UnsafeRawBufferPointer
        let query: UnsafeRawBufferPointer
        if let q = find(UInt8(ascii: "?"), bytes) {
            path = UnsafeRawBufferPointer(rebasing: bytes[..<q])
            query = UnsafeRawBufferPointer(rebasing: bytes[(q + 1)...])
        } else {
            (path, query) = (bytes, UnsafeRawBufferPointer(start: nil, count: 0))
        }
        let decodedPath = path.isEmpty ? "/" : percentDecode(Substring(String(decoding: path, as: UTF8.self)))
        guard let decoded = decodedPath, !decoded.utf8.contains(0) else {
            return .failure(.badRequest("the request path has a broken percent escape"))
        }
        return .success((decoded, String(decoding: query, as: UTF8.self)))
    }

    static func percentDecode(_ s: Substring) -> String? {
        // Most paths have no escape: no call into Core for them (on every request's path).
        if !s.utf8.contains(UInt8(ascii: "%")) { return String(s) }
        return try? PercentEncoding.decode(s)
    }
}
