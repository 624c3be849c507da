import TestSupport
import Testing

@testable import HTTP

/// Valid and invalid requests the mutations start from.
let fuzzCorpus: [String] = [
    "GET /thumb?src=a.jpg&w=300&ratio=4:3&mode=fill HTTP/1.1\r\nHost: localhost\r\nAccept: image/webp,*/*\r\n\r\n",
    "HEAD /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    "GET / HTTP/1.0\r\n\r\n",
    "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
    "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "POST /thumb HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcdGET /b HTTP/1.1\r\nHost: x\r\n\r\n",
    "GET /%2e%2e/x HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n",
    "GET http://h/p?q HTTP/1.1\r\nHost: h\r\nIf-None-Match: \"abc\"\r\n\r\n",
]

@Suite struct ParserFuzzTests {
    /// Parses everything in `bytes`, as a connection would: request after request until
    /// an error, then the connection closes. Returns how many requests and whether it
    /// ended in an error, in the middle of a request (a clean close at EOF) or cleanly.
    static func run(_ bytes: [UInt8]) -> (requests: Int, failed: Bool, partial: Bool) {
        var p = RequestParser()
        var rest = bytes[...]
        var requests = 0
        while !rest.isEmpty {
            let (consumed, r) = Array(rest).withUnsafeBytes { p.parse($0) }
            guard consumed > 0 || r != .needMore else { return (requests, false, true) }
            rest = rest.dropFirst(consumed)
            switch r {
            case .needMore: return (requests, false, true)
            case .request: requests += 1
            case .failure(let e):
                #expect((400...599).contains(e.status) && e.close)
                return (requests, true, false)
            }
        }
        return (requests, false, !p.isIdle)
    }

    @Test func hundredThousandMutatedRequestsNeverTrap() {
        var g = SeededRandom(seed: 0xF022)
        var outcomes = (requests: 0, failed: 0, partial: 0)
        for _ in 0..<100_000 {
            var bytes = Array((fuzzCorpus.randomElement(using: &g) ?? "").utf8)
            if Int.random(in: 0..<4, using: &g) == 0 {
                bytes += Array((fuzzCorpus.randomElement(using: &g) ?? "").utf8)
            }
            for _ in 0..<Int.random(in: 1...6, using: &g) where !bytes.isEmpty {
                let i = Int.random(in: 0..<bytes.count, using: &g)
                switch Int.random(in: 0..<6, using: &g) {
                case 0: bytes[i] ^= UInt8(1 << Int.random(in: 0..<8, using: &g))
                case 1: bytes.remove(at: i)
                case 2: bytes.insert([0, 13, 10, 32, 58, 9, 0x7F, 0xFF].randomElement(using: &g) ?? 0, at: i)
                case 3:
                    bytes.insert(contentsOf: bytes[i..<min(bytes.count, i + Int.random(in: 1...20, using: &g))], at: i)
                case 4: bytes = Array(bytes.prefix(i))
                default: bytes[i] = UInt8.random(in: 0...255, using: &g)
                }
            }
            let r = Self.run(bytes)
            outcomes.requests += r.requests
            if r.failed { outcomes.failed += 1 }
            if r.partial { outcomes.partial += 1 }
        }
        // The mutations reach every outcome: requests, errors, and inputs cut short.
        #expect(outcomes.requests > 10_000 && outcomes.failed > 10_000 && outcomes.partial > 1_000, "\(outcomes)")
    }
}
