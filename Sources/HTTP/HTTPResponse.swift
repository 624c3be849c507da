import Syscalls

/// A response: status, header fields and a body. `Date`, `Server`, `Content-Length` and
/// `Connection` are added when it is written.
public struct HTTPResponse: Sendable {
    public enum Body: Sendable {
        case bytes([UInt8])
        /// `length` bytes of an open file from `offset`, sent by sendfile(2).
        case file(OpenFile, offset: Int64, length: Int64)

        public var length: Int64 {
            switch self {
            case .bytes(let b): Int64(b.count)
            case .file(_, _, let length): length
            }
        }
    }

    public var status: Int
    public var headers: HTTPHeaders
    public var body: Body
    /// Shown in the access log (for example `cache=HIT`), never sent.
    public var logNote: String?
    /// An error answer's code (`not_found`, …), for a handler that acts on it.
    public var errorCode: String?

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: Body = .bytes([]), logNote: String? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.logNote = logNote
    }

    /// A text body.
    public static func text(_ status: Int, _ text: String, contentType: String = "text/plain; charset=utf-8")
        -> HTTPResponse
    {
        HTTPResponse(
            status: status, headers: HTTPHeaders([("Content-Type", contentType)]), body: .bytes(Array(text.utf8)))
    }

    /// SPEC's error body: `{"error": {"status": …, "code": "…", "message": "…"}}`.
    public static func error(_ status: Int, code: String, message: String, headers extra: HTTPHeaders = HTTPHeaders())
        -> HTTPResponse
    {
        let body =
            #"{"error": {"status": \#(status), "code": \#(JSON.string(code)), "message": \#(JSON.string(message))}}"#
            + "\n"
        var headers = HTTPHeaders([("Content-Type", "application/json")])
        for f in extra.fields { headers.append(f.name, f.value) }
        var r = HTTPResponse(status: status, headers: headers, body: .bytes(Array(body.utf8)))
        r.errorCode = code
        return r
    }

    public static func error(_ e: HTTPError) -> HTTPResponse {
        var extra = HTTPHeaders()
        if let seconds = e.retryAfterSeconds { extra.append("Retry-After", "\(seconds)") }
        return error(e.status, code: e.code, message: e.message, headers: extra)
    }

    /// The status line and header block, ending in the empty line. Built as bytes: it is
    /// on every response's path.
    public func head(date: String, keepAlive: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160 + headers.fields.count * 48)
        writeHead(into: &out, date: date, keepAlive: keepAlive)
        return out
    }

    /// Appends the head to `out`, so a connection can reuse one buffer for every response.
    public func writeHead(into out: inout [UInt8], date: String, keepAlive: Bool) {
        // A native string's bytes are copied at once; the per-byte append is the fallback.
        func add(_ s: String) {
            if s.utf8.withContiguousStorageIfAvailable({ out.append(contentsOf: $0) }) == nil {
                out.append(contentsOf: s.utf8)
            }
        }
        add("HTTP/1.1 ")
        Self.appendDecimal(Int64(status), to: &out)
        out.append(0x20)
        add(HTTPResponse.reason(status))
        add("\r\nDate: ")
        add(date)
        add("\r\nServer: aspect\r\n")
        // A 304 carries no Content-Length of its own: it would describe the body a 200
        // would have, which this server does not know here.
        if status != 304 {
            add("Content-Length: ")
            Self.appendDecimal(body.length, to: &out)
            add("\r\n")
        }
        headers.write(into: &out)
        if !keepAlive { add("Connection: close\r\n") }
        add("\r\n")
    }

    /// A non-negative number's digits, without making a String.
    static func appendDecimal(_ n: Int64, to out: inout [UInt8]) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var count = 0
        var v = UInt64(max(0, n))
        withUnsafeMutableBytes(of: &digits) { d in
            repeat {
                d[23 - count] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
                count += 1
            } while v > 0
            out.append(contentsOf: d[(24 - count)...])
        }
    }

    public static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 410: "Gone"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }
}

/// JSON string literals, for error bodies and log lines.
public enum JSON {
    public static func string(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20 || u.value == 0x7F:
                let hex = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}
