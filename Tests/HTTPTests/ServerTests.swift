import Foundation
import Glibc
import HTTP
import TestSupport
import Testing

@testable import HTTPServer

/// The server over real loopback sockets.
@Suite(.serialized) struct ServerTests {
    @Test func hundredRequestsOnOneKeepAliveConnection() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try TestClient(port: s.port)
        for i in 0..<100 {
            try c.send(TestClient.get("/echo?\(i)"))
            let r = try c.response()
            #expect(r.status == 200 && r.text == "\(i)")
            #expect(r.headers["connection"] == nil && r.headers["server"] == "aspect" && r.headers["date"] != nil)
        }
    }

    @Test func tenPipelinedRequestsInOneWriteAnswerInOrder() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try TestClient(port: s.port)
        // Fast, slow (pool) and HEAD requests mixed: the answers still come in order.
        let paths = (0..<10).map { $0 % 3 == 1 ? "/slow?\(10 * $0)" : "/echo?\($0)" }
        try c.send(
            paths.enumerated().map { i, p in i == 5 ? "HEAD \(p) HTTP/1.1\r\nHost: x\r\n\r\n" : TestClient.get(p) }
                .joined())
        for (i, p) in paths.enumerated() {
            let r = try c.response(head: i == 5)
            #expect(r.status == 200)
            if i != 5 { #expect(r.text == (p.hasPrefix("/slow") ? "slept \(10 * i)" : "\(i)")) }
        }
    }

    @Test func aRequestSplitAtEveryByteBoundary() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let bytes = Array(TestClient.get("/echo?split").utf8)
        for cut in 1..<bytes.count {
            let c = try TestClient(port: s.port)
            try c.send(Array(bytes[0..<cut]))
            usleep(2000)
            try c.send(Array(bytes[cut...]))
            let r = try c.response()
            #expect(r.status == 200 && r.text == "split", "cut at \(cut)")
        }
    }

    @Test func http10Closes() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try TestClient(port: s.port)
        try c.send("GET /hello HTTP/1.0\r\n\r\n")
        let r = try c.response()
        #expect(r.status == 200 && r.text == "hello" && r.headers["connection"] == "close")
        #expect(c.closedByPeer())
    }

    /// Connections are not given TCP_NODELAY one by one: they inherit the listener's.
    @Test func everyAcceptedConnectionHasNoDelayFromTheListener() throws {
        let (listener, port) = try Listener.open(host: "127.0.0.1", port: 0)
        defer { Glibc.close(listener) }
        let client = try TestClient(port: port)
        var fd: Int32 = -1
        withExtendedLifetime(client) {
            for _ in 0..<200 where fd < 0 {
                fd = accept(listener, nil, nil)
                if fd < 0 { usleep(5000) }
            }
        }
        #expect(fd >= 0)
        defer { Glibc.close(fd) }
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        #expect(getsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &value, &length) == 0)
        #expect(value == 1)
    }

    /// A request already there when the connection is accepted, with the connection closed
    /// after it: answered and closed on the spot, over and over.
    @Test func aRequestSentWithTheConnectionIsAnsweredAndClosed() throws {
        let s = try RunningServer()
        defer { s.stop() }
        for i in 0..<50 {
            let c = try TestClient(port: s.port)
            try c.send("GET /echo?\(i) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let r = try c.response()
            #expect(r.status == 200 && r.text == "\(i)" && r.headers["connection"] == "close")
            #expect(c.closedByPeer())
        }
    }

    /// Connections read the moment they are accepted, before any epoll event: those that
    /// close at once, are reset, or are reset halfway through a request all leave the
    /// table, and the server serves on.
    @Test func connectionsClosedOrResetAtOnceAreAllLetGo() throws {
        let s = try RunningServer()
        defer { s.stop() }
        for i in 0..<150 {
            let c = try TestClient(port: s.port)
            if i % 3 == 1 { try c.send("GET /echo?\(i) HTTP/1.1\r\nHo") }
            if i % 3 != 0 {
                // Closing with a zero linger sends a reset, not a FIN.
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            }
        }
        var open = -1
        for _ in 0..<500 {
            open = s.server.stats.snapshot.connections
            if open == 0 { break }
            usleep(10_000)
        }
        #expect(open == 0, "\(open) connections still open")
        let c = try TestClient(port: s.port)
        try c.send(TestClient.get("/echo?after"))
        #expect(try c.response().text == "after")
    }

    @Test func headHasTheHeadersAndNoBody() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try TestClient(port: s.port)
        try c.send("HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\n" + TestClient.get("/echo?after"))
        let h = try c.response(head: true)
        #expect(h.status == 200 && h.headers["content-length"] == "5")
        #expect(try c.response().text == "after", "no body bytes were sent for HEAD")
    }

    struct BadCase: Sendable, CustomTestStringConvertible {
        let name: String
        let request: String
        let status: Int
        let closes: Bool
        var testDescription: String { name }
    }

    static let badCases: [BadCase] = [
        BadCase(name: "400 bad request line", request: "GARBAGE\r\n\r\n", status: 400, closes: true),
        BadCase(
            name: "400 smuggling",
            request: "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
            status: 400, closes: true),
        BadCase(name: "404 route", request: TestClient.get("/nowhere"), status: 404, closes: false),
        BadCase(name: "405 method", request: "DELETE /hello HTTP/1.1\r\nHost: x\r\n\r\n", status: 405, closes: false),
        BadCase(
            name: "413 body", request: "GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 999999\r\n\r\n", status: 413,
            closes: true),
        BadCase(
            name: "414 target", request: TestClient.get("/" + String(repeating: "a", count: 9000)), status: 414,
            closes: true),
        BadCase(
            name: "431 headers",
            request: "GET / HTTP/1.1\r\nHost: x\r\n" + (0..<120).map { "X-\($0): 1\r\n" }.joined() + "\r\n",
            status: 431, closes: true),
        BadCase(name: "505 version", request: "GET / HTTP/2.0\r\nHost: x\r\n\r\n", status: 505, closes: true),
    ]

    @Test func everyErrorHasItsStatusAndJSONBodyAndTheServerServesOn() throws {
        let s = try RunningServer()
        defer { s.stop() }
        for bad in Self.badCases {
            let c = try TestClient(port: s.port)
            try c.send(bad.request)
            let r = try c.response()
            #expect(r.status == bad.status, "\(bad.name)")
            #expect(r.headers["content-type"] == "application/json", "\(bad.name)")
            let json = try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: [String: Any]]
            #expect(json?["error"]?["status"] as? Int == bad.status, "\(bad.name): \(r.text)")
            #expect((json?["error"]?["message"] as? String)?.isEmpty == false)
            #expect(json?["error"]?["code"] is String)
            if bad.status == 405 { #expect(r.headers["allow"] == "GET, HEAD") }
            if bad.closes {
                #expect(r.headers["connection"] == "close" && c.closedByPeer(), "\(bad.name) must close")
            } else {
                try c.send(TestClient.get("/hello"))
                #expect(try c.response().text == "hello", "\(bad.name): the connection serves on")
            }
        }
        let after = try TestClient(port: s.port)
        try after.send(TestClient.get("/hello"))
        #expect(try after.response().status == 200)
    }

    @Test func aFullQueueAnswers503WithRetryAfterAtOnce() throws {
        let s = try RunningServer {
            $0.workers = 1
            $0.queueDepth = 1
        }
        defer { s.stop() }
        // One job running, one waiting: the third is refused at once.
        let busy = try (0..<2).map { _ in try TestClient(port: s.port) }
        for c in busy { try c.send(TestClient.get("/slow?2500")) }
        usleep(200_000)
        let start = Date()
        let third = try TestClient(port: s.port)
        try third.send(TestClient.get("/slow?10"))
        let r = try third.response()
        #expect(r.status == 503 && r.headers["retry-after"] == "1")
        #expect(Date().timeIntervalSince(start) < 2, "503 comes at once, not after the queue drains (5 s)")
        for c in busy { #expect(try c.response().status == 200) }
    }

    /// A deferred request waits holding no worker: with the one worker idle, pool work is
    /// served while ten deferred requests are still waiting, and each is answered, in order
    /// on a keep-alive connection, when its wait ends.
    @Test func deferredRequestsWaitWithoutHoldingAWorker() throws {
        let s = try RunningServer {
            $0.workers = 1
            $0.queueDepth = 1
        }
        defer { s.stop() }
        let waiting = try (0..<10).map { _ in try TestClient(port: s.port) }
        for c in waiting { try c.send(TestClient.get("/deferred?3000")) }
        usleep(100_000)
        let start = Date()
        let worker = try TestClient(port: s.port)
        try worker.send(TestClient.get("/slow?10"))
        #expect(try worker.response().text == "slept 10")
        #expect(Date().timeIntervalSince(start) < 2, "pool work is not held up by the waiting requests (3 s)")
        for c in waiting { #expect(try c.response().text == "waited 3000") }
        // Keep-alive: a second request on the same connection, then one handed to the pool.
        try waiting[0].send(TestClient.get("/deferred?10") + TestClient.get("/deferred?10&then=work"))
        #expect(try waiting[0].response().text == "waited 10")
        #expect(try waiting[0].response().text == "waited 10, then worked")
    }

    /// Work handed over by a deferred request meets the same bound as any: 503 when full.
    @Test func deferredWorkMeetsAFullQueueWith503() throws {
        let s = try RunningServer {
            $0.workers = 1
            $0.queueDepth = 1
        }
        defer { s.stop() }
        let busy = try (0..<2).map { _ in try TestClient(port: s.port) }
        for c in busy { try c.send(TestClient.get("/slow?800")) }
        usleep(200_000)
        let late = try TestClient(port: s.port)
        try late.send(TestClient.get("/deferred?10&then=work"))
        let r = try late.response()
        #expect(r.status == 503 && r.headers["retry-after"] == "1")
        for c in busy { #expect(try c.response().status == 200) }
    }

    @Test func aDribblingClientGets408WhileOthersAreServed() throws {
        let s = try RunningServer { $0.headerTimeoutMs = 600 }
        defer { s.stop() }
        let slow = try TestClient(port: s.port)
        let start = Date()
        try slow.send("GET /hello HTTP/1.1\r\n")
        let others = DispatchGroup()
        let served = ManagedAtomicCounter()
        for _ in 0..<20 {
            others.enter()
            DispatchQueue.global().async {
                defer { others.leave() }
                guard let c = try? TestClient(port: s.port) else { return }
                for i in 0..<5 {
                    try? c.send(TestClient.get("/echo?\(i)"))
                    if (try? c.response())?.text == "\(i)" { served.add() }
                    usleep(50_000)
                }
            }
        }
        // Dribble a header byte every 100 ms: never finishing within 600 ms.
        for b in "X-Slow: 1".utf8 {
            try? slow.send([b])
            usleep(100_000)
            if Date().timeIntervalSince(start) > 1.2 { break }
        }
        let r = try slow.response()
        #expect(r.status == 408 && r.headers["connection"] == "close")
        #expect(slow.closedByPeer())
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed > 0.55 && elapsed < 2, "\(elapsed)")
        others.wait()
        #expect(served.value == 100)
    }

    @Test func idleKeepAliveConnectionsClose() throws {
        let s = try RunningServer { $0.idleTimeoutMs = 300 }
        defer { s.stop() }
        let c = try TestClient(port: s.port)
        try c.send(TestClient.get("/hello"))
        _ = try c.response()
        let start = Date()
        #expect(c.closedByPeer())
        #expect(Date().timeIntervalSince(start) < 2)
    }

    @Test func fiveHundredConcurrentConnectionsAreAllServed() throws {
        raiseFileLimit(4096)
        let s = try RunningServer()
        defer { s.stop() }
        let clients = try (0..<500).map { _ in try TestClient(port: s.port) }
        for (i, c) in clients.enumerated() { try c.send(TestClient.get("/echo?\(i)")) }
        for (i, c) in clients.enumerated() { #expect(try c.response().text == "\(i)") }
    }

    @Test func aClientThatLeavesMidResponseChangesNothingForOthers() throws {
        let s = try RunningServer()
        defer { s.stop() }
        for _ in 0..<5 {
            let leaver = try TestClient(port: s.port)
            try leaver.send(TestClient.get("/big?\(20 << 20)"))
            var chunk = [UInt8](repeating: 0, count: 1000)
            _ = recv(leaver.fd, &chunk, chunk.count, 0)
        }
        // (each leaver is closed here, mid-body)
        let c = try TestClient(port: s.port)
        try c.send(TestClient.get("/big?1000000") + TestClient.get("/hello"))
        #expect(try c.response().body.count == 1_000_000)
        #expect(try c.response().text == "hello")
        // The leavers' resets are handled as the loop gets to them: polled, at most 10 s.
        for _ in 0..<1000 where s.server.stats.snapshot.connections != 1 { usleep(10_000) }
        #expect(s.server.stats.snapshot.connections == 1)
    }

    /// The write timeout alone cuts a client that stops reading: the send-rate floor is off
    /// here (it judges 5-s spans, and would close the connection too), and the same stuck
    /// client under a write timeout of a minute is still held when this one has been cut.
    @Test func aClientThatStopsReadingIsCutOffAfterTheWriteTimeout() throws {
        let s = try RunningServer {
            $0.writeTimeoutMs = 400
            $0.minSendBytesPerSecond = 0
        }
        defer { s.stop() }
        let patient = try RunningServer {
            $0.writeTimeoutMs = 60_000
            $0.minSendBytesPerSecond = 0
        }
        defer { patient.stop() }
        let stuck = try TestClient(port: s.port)
        try stuck.send(TestClient.get("/big?\(64 << 20)"))
        let held = try TestClient(port: patient.port)
        try held.send(TestClient.get("/big?\(64 << 20)"))
        // Taken in, then closed once writeTimeoutMs passes with nothing read: polled, at
        // most 10 s each.
        for _ in 0..<1000 where s.server.stats.snapshot.connections == 0 { usleep(10_000) }
        #expect(s.server.stats.snapshot.connections == 1)
        for _ in 0..<1000 where s.server.stats.snapshot.connections != 0 { usleep(10_000) }
        #expect(s.server.stats.snapshot.connections == 0, "the stuck connection was closed")
        #expect(patient.server.stats.snapshot.connections == 1, "only the write timeout closed it")
        let c = try TestClient(port: s.port)
        try c.send(TestClient.get("/hello"))
        #expect(try c.response().text == "hello")
    }

    @Test func fileBodiesGoBySendfile() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aspect-sendfile-\(getpid())").path
        let content = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try Data(content).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        let c = try TestClient(port: s.port)
        try c.send(
            TestClient.get("/file?\(path)") + "HEAD /file?\(path) HTTP/1.1\r\nHost: x\r\n\r\n"
                + TestClient.get("/hello"))
        #expect(try c.response().body == content)
        #expect(try c.response(head: true).headers["content-length"] == "300000")
        #expect(try c.response().text == "hello")
    }

    @Test func readyzTurns503WhileDraining() throws {
        let s = try RunningServer()
        let c = try TestClient(port: s.port)
        try c.send(TestClient.get("/readyz"))
        #expect(try c.response().status == 200)
        // A request half sent when the shutdown begins is still answered: 503, and close.
        try c.send("GET /readyz HTTP/1.1\r\nHost: x\r\n")
        usleep(50_000)
        // Begun on this thread (it does not block), waited for on another.
        s.server.shutdown()
        let stopped = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            s.stop()
            stopped.signal()
        }
        usleep(100_000)
        try c.send("\r\n")
        let r = try c.response()
        #expect(r.status == 503 && r.text == "draining" && r.headers["connection"] == "close")
        #expect(stopped.wait(timeout: .now() + 5) == .success)
    }

    @Test func shutdownFinishesInFlightRequestsAndRefusesNewOnes() throws {
        let s = try RunningServer()
        let inFlight = try (0..<3).map { _ in try TestClient(port: s.port) }
        for c in inFlight { try c.send(TestClient.get("/slow?500")) }
        let keepAlive = try TestClient(port: s.port)
        try keepAlive.send(TestClient.get("/slow?300"))
        usleep(100_000)
        // Begun on this thread (it does not block), waited for on another.
        s.server.shutdown()
        let stopped = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            s.stop()
            stopped.signal()
        }
        usleep(100_000)
        #expect(throws: TestError.self) { _ = try TestClient(port: s.port) }
        for c in inFlight {
            let r = try c.response()
            #expect(r.status == 200 && r.text == "slept 500" && r.headers["connection"] == "close")
        }
        #expect(try keepAlive.response().status == 200)
        #expect(stopped.wait(timeout: .now() + 5) == .success)
    }
}

/// A counter for test threads.
final class ManagedAtomicCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func add() { lock.withLock { n += 1 } }
    var value: Int { lock.withLock { n } }
}
