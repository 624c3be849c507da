import Testing

@testable import HTTP

/// Parses one buffer to its first result.
func parseOne(_ text: String, limits: ParserLimits = ParserLimits()) -> RequestParser.Result {
    var p = RequestParser(limits: limits)
    return p.parse(Array(text.utf8)).result
}

func head(_ r: RequestParser.Result) -> HTTPRequestHead? {
    if case .request(let h) = r { return h }
    return nil
}

func failure(_ r: RequestParser.Result) -> HTTPError? {
    if case .failure(let e) = r { return e }
    return nil
}

/// Every result of parsing `bytes` fed in pieces cut at `cuts`.
func parseAll(_ bytes: [UInt8], cuts: [Int], limits: ParserLimits = ParserLimits()) -> [RequestParser.Result] {
    var p = RequestParser(limits: limits)
    var results: [RequestParser.Result] = []
    var pending: [UInt8] = []
    var start = 0
    for end in cuts + [bytes.count] where end >= start {
        pending += bytes[start..<end]
        start = end
        while !pending.isEmpty {
            let (consumed, r) = p.parse(pending)
            pending.removeFirst(consumed)
            if case .needMore = r { break }
            results.append(r)
            if case .failure = r { return results }
        }
    }
    return results
}

@Suite struct RequestParserTests {
    /// The bit tables behind `Token.isTChar`, byte by byte against RFC 9110 §5.6.2's list.
    @Test func tcharIsRFC9110sListForEveryByte() {
        let listed = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        for byte in 0...255 {
            #expect(Token.isTChar(UInt8(byte)) == listed.contains(UInt8(byte)), "byte \(byte)")
        }
    }

    @Test func parsesARequest() throws {
        let r = parseOne(
            "GET /th%75mb?src=a%20b.jpg&w=3 HTTP/1.1\r\nHost: x\r\nAccept: image/webp\r\naccept: */*\r\nX-Empty:\r\n\r\n"
        )
        let h = try #require(head(r))
        #expect(h.method == "GET" && h.path == "/thumb" && h.query == "src=a%20b.jpg&w=3")
        #expect(h.target == "/th%75mb?src=a%20b.jpg&w=3")
        #expect(h.minorVersion == 1 && h.keepAlive)
        #expect(h.headers["ACCEPT"] == "image/webp")
        #expect(h.headers.values("Accept") == ["image/webp", "*/*"])
        #expect(h.headers["x-empty"] == "")
    }

    @Test func keepAliveRules() throws {
        #expect(head(parseOne("GET / HTTP/1.0\r\n\r\n"))?.keepAlive == false)
        #expect(head(parseOne("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"))?.keepAlive == false)
        #expect(
            head(parseOne("GET / HTTP/1.1\r\nHost: a\r\nConnection: Keep-Alive, Close\r\n\r\n"))?.keepAlive == false)
        #expect(head(parseOne("GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n"))?.keepAlive == true)
    }

    @Test func bareLineFeedsAndLeadingEmptyLinesAreTolerated() throws {
        #expect(head(parseOne("\r\n\r\nGET /a HTTP/1.1\nHost: x\n\n"))?.path == "/a")
    }

    @Test func absoluteFormAndAsterisk() throws {
        #expect(head(parseOne("GET http://example.com:8080/thumb?src=a HTTP/1.1\r\nHost: x\r\n\r\n"))?.path == "/thumb")
        #expect(head(parseOne("GET http://example.com?x=1 HTTP/1.1\r\nHost: x\r\n\r\n"))?.query == "x=1")
        #expect(head(parseOne("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"))?.path == "*")
    }

    /// The path as sent, escapes kept, for a signature over it (imgproxy's, thumbor's):
    /// no query, and from the path on in an absolute-form target.
    @Test(arguments: [
        ("/sig/w:50/plain/x%20y.jpg?cb=1", "/sig/w:50/plain/x y.jpg", "/sig/w:50/plain/x%20y.jpg"),
        ("/a%2541.jpg", "/a%41.jpg", "/a%2541.jpg"),
        ("http://example.com:8080/sig/plain/a%20b.jpg?x", "/sig/plain/a b.jpg", "/sig/plain/a%20b.jpg"),
        ("http://example.com?x=1", "/", "/"),
    ])
    func theRawPathIsAsSent(target: String, path: String, raw: String) throws {
        let h = try #require(head(parseOne("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n")))
        #expect(h.path == path && h.rawPath == raw)
    }

    struct Bad: Sendable, CustomTestStringConvertible {
        let name: String
        let text: String
        let status: Int
        var testDescription: String { name }
    }

    static let long = String(repeating: "a", count: 8200)
    static let bad: [Bad] = [
        Bad(name: "space before colon", text: "GET / HTTP/1.1\r\nHost : x\r\n\r\n", status: 400),
        Bad(name: "obs-fold", text: "GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  2\r\n\r\n", status: 400),
        Bad(name: "NUL in a value", text: "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\u{0}b\r\n\r\n", status: 400),
        Bad(name: "CR in a value", text: "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", status: 400),
        Bad(
            name: "Content-Length and Transfer-Encoding",
            text: "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc", status: 400
        ),
        Bad(
            name: "Transfer-Encoding", text: "GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            status: 400),
        Bad(
            name: "two different Content-Lengths",
            text: "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", status: 400),
        Bad(
            name: "a Content-Length list that differs",
            text: "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 4\r\n\r\nabcd", status: 400),
        Bad(
            name: "a negative Content-Length", text: "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
            status: 400),
        Bad(
            name: "a body over the limit", text: "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n",
            status: 413),
        Bad(name: "no Host in 1.1", text: "GET / HTTP/1.1\r\n\r\n", status: 400),
        Bad(name: "two Hosts", text: "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", status: 400),
        Bad(name: "HTTP/2.0", text: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", status: 505),
        Bad(name: "no version", text: "GET /\r\n\r\n", status: 400),
        Bad(name: "two spaces", text: "GET  / HTTP/1.1\r\nHost: x\r\n\r\n", status: 400),
        Bad(name: "lower-case version", text: "GET / http/1.1\r\nHost: x\r\n\r\n", status: 400),
        Bad(name: "a relative target", text: "GET thumb HTTP/1.1\r\nHost: x\r\n\r\n", status: 400),
        Bad(name: "a broken escape in the path", text: "GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n", status: 400),
        Bad(name: "a control byte in the target", text: "GET /a\u{1}b HTTP/1.1\r\nHost: x\r\n\r\n", status: 400),
        Bad(name: "a target over 8 KiB", text: "GET /\(long) HTTP/1.1\r\nHost: x\r\n\r\n", status: 414),
        Bad(
            name: "headers over 16 KiB",
            text: "GET / HTTP/1.1\r\nHost: x\r\n" + (0..<3).map { "X-\($0): \(long)\r\n" }.joined() + "\r\n",
            status: 431),
        Bad(
            name: "101 fields",
            text: "GET / HTTP/1.1\r\nHost: x\r\n" + (0..<100).map { "X-\($0): 1\r\n" }.joined() + "\r\n", status: 431),
        Bad(name: "a header without a colon", text: "GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", status: 400),
        Bad(name: "a method with a separator", text: "G(ET / HTTP/1.1\r\nHost: x\r\n\r\n", status: 400),
    ]

    @Test(arguments: bad)
    func refuses(_ bad: Bad) throws {
        let e = try #require(failure(parseOne(bad.text)), "accepted: \(bad.name)")
        #expect(e.status == bad.status)
        #expect(e.close)
        #expect(!e.message.isEmpty && !e.code.isEmpty)
    }

    @Test func limitsHoldAtTheirEdges() throws {
        let target = "/" + String(repeating: "a", count: 8191)
        #expect(head(parseOne("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n"))?.target.count == 8192)
        let hundred = "GET / HTTP/1.1\r\n" + (0..<99).map { "X-\($0): 1\r\n" }.joined() + "Host: x\r\n\r\n"
        #expect(head(parseOne(hundred))?.headers.count == 100)
        // A too-long target is refused as soon as it is too long, not when it ends.
        var p = RequestParser()
        let (_, r) = p.parse(Array(("GET /" + String(repeating: "b", count: 9000)).utf8))
        #expect(failure(r)?.status == 414)
    }

    @Test func theSameContentLengthTwiceIsOneBodyDrained() throws {
        let text =
            "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\nHost: x\r\n\r\n"
        let results = parseAll(Array(text.utf8), cuts: [])
        #expect(results.compactMap(head).map(\.path) == ["/a", "/b"])
    }

    @Test func pipelinedRequestsComeOneAtATime() throws {
        let text = (0..<10).map { "GET /r\($0) HTTP/1.1\r\nHost: x\r\n\r\n" }.joined()
        let results = parseAll(Array(text.utf8), cuts: [])
        #expect(results.compactMap(head).map(\.path) == (0..<10).map { "/r\($0)" })
    }

    @Test func splitAtEveryByteBoundaryGivesTheSameRequests() throws {
        let text =
            "GET /a?x=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhiHEAD /b HTTP/1.1\r\nHost: y\r\nAccept: */*\r\n\r\n"
        let bytes = Array(text.utf8)
        let whole = parseAll(bytes, cuts: [])
        #expect(whole.compactMap(head).map(\.path) == ["/a", "/b"])
        for cut in 0...bytes.count {
            #expect(parseAll(bytes, cuts: [cut]) == whole, "cut at \(cut)")
        }
        // And one byte at a time.
        #expect(parseAll(bytes, cuts: Array(0..<bytes.count)) == whole)
    }
}

@Suite struct ResponseTests {
    @Test func headAndErrorBody() {
        var r = HTTPResponse.error(405, code: "method_not_allowed", message: "POST is \"not\" allowed\n")
        r.headers.append("Allow", "GET, HEAD")
        let head = String(decoding: r.head(date: "Thu, 01 Jan 1970 00:00:00 GMT", keepAlive: false), as: UTF8.self)
        #expect(
            head.hasPrefix(
                "HTTP/1.1 405 Method Not Allowed\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\nServer: aspect\r\n"))
        #expect(head.contains("\r\nContent-Length: \(r.body.length)\r\n"))
        #expect(head.contains("\r\nAllow: GET, HEAD\r\n") && head.hasSuffix("Connection: close\r\n\r\n"))
        guard case .bytes(let body) = r.body else {
            Issue.record("bytes expected")
            return
        }
        #expect(
            String(decoding: body, as: UTF8.self)
                == #"{"error": {"status": 405, "code": "method_not_allowed", "message": "POST is \"not\" allowed\n"}}"#
                + "\n")
    }

    @Test(arguments: [
        (0, "Thu, 01 Jan 1970 00:00:00 GMT"), (1_000_000_000, "Sun, 09 Sep 2001 01:46:40 GMT"),
        (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"), (1_796_223_845, "Wed, 02 Dec 2026 15:04:05 GMT"),
    ])
    func httpDates(seconds: Int, text: String) {
        #expect(HTTPDate.format(epochSeconds: seconds) == text)
    }

    @Test func jsonEscapes() {
        #expect(JSON.string("a\"b\\c\u{1}\té") == #""a\"b\\c\u0001\té""#)
    }
}

extension RequestParser.Result: CustomStringConvertible {
    public var description: String {
        switch self {
        case .needMore: "needMore"
        case .request(let h): "request \(h.method) \(h.target)"
        case .failure(let e): "failure \(e.status)"
        }
    }
}

/// Defect 7: bytes that cannot start a request line are refused as they arrive, not after
/// the header timeout.
@Suite struct NotHTTPTests {
    static let tlsClientHello: [UInt8] = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03]

    @Test(arguments: [
        ("TLS ClientHello", tlsClientHello), ("bare CRs", [0x0D, 0x0D, 0x0D]), ("NUL", [0x00]),
        ("a method too long", Array(String(repeating: "A", count: 40).utf8)),
        ("a CR inside the method", Array("GE\rT".utf8)),
    ])
    func refusedAtOnce(_ name: String, _ bytes: [UInt8]) {
        var p = RequestParser()
        let (_, result) = p.parse(bytes)
        #expect(result == .failure(.notHTTP), "\(name)")
    }

    @Test(arguments: ["G", "GET", "GET ", "GET /thumb?src=a", "\r", "\r\n", "\r\nGET"])
    func aPlausibleStartWaitsForMore(_ text: String) {
        var p = RequestParser()
        #expect(p.parse(Array(text.utf8)).result == .needMore, "\(text.debugDescription)")
    }
}
