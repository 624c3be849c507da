import Foundation
import Glibc
import HTTP
import TestSupport
import Testing

@testable import HTTPServer

/// A full connection table through real sockets (issue 44): whom it gives up for a
/// newcomer, and the send-rate floor.
@Suite struct SheddingServerTests {
    /// Polls `condition` for up to 10 s.
    static func waitUntil(_ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(10)
        while !condition() {
            guard Date() < deadline else { throw TestError("timed out waiting") }
            usleep(10_000)
        }
    }

    /// A full table (issue 44): a newcomer takes the place of the oldest idle connection;
    /// only when every connection is mid-render is it refused, with a clean 503.
    @Test func aFullTableShedsAnIdleConnectionAndRefusesOnlyWhenNoneCanGo() throws {
        let s = try RunningServer {
            $0.maxConnections = 3
            $0.workers = 4
        }
        defer { s.stop() }
        let held = try (0..<3).map { _ in try TestClient(port: s.port) }
        usleep(100_000)
        let newcomer = try TestClient(port: s.port)
        try newcomer.send(TestClient.get("/hello"))
        #expect(try newcomer.response().text == "hello")
        #expect(held[0].closedByPeer(), "the oldest idle one was given up")
        for c in held.dropFirst() {
            try c.send(TestClient.get("/hello"))
            #expect(try c.response().text == "hello")
        }
        #expect(s.server.stats.snapshot.shed["idle"] == 1 && s.server.stats.snapshot.refused == 0)
        // Every connection mid-render: none can go, the newcomer is refused.
        let busy = [newcomer] + held.dropFirst()
        for c in busy { try c.send(TestClient.get("/slow?1500")) }
        try Self.waitUntil { s.server.stats.snapshot.workersBusy == 3 }
        let extra = try TestClient(port: s.port)
        let r = try extra.response()
        #expect(r.status == 503 && r.headers["connection"] == "close")
        #expect(extra.closedByPeer())
        for c in busy { #expect(try c.response().text == "slept 1500") }
        #expect(s.server.stats.snapshot.refused == 1)
    }

    /// Before a render, the shedding takes the slowest of an answer stalled (nothing read
    /// for a second: closed) and a head still arriving (it gets the 408); a render in
    /// progress is never taken.
    @Test func aFullTableShedsASlowReaderThenASlowHead() throws {
        let s = try RunningServer {
            $0.maxConnections = 3
            $0.workers = 4
        }
        defer { s.stop() }
        let rendering = try TestClient(port: s.port)
        try rendering.send(TestClient.get("/slow?6000"))
        let reader = try TestClient(port: s.port, receiveBuffer: 4096)
        try reader.send(TestClient.get("/big?\(32 << 20)"))
        let dribbler = try TestClient(port: s.port)
        try dribbler.send(Array("GET /hel".utf8))
        // The reader has had nothing taken for over a second: 0 bytes a second, below the
        // dribbler's few.
        usleep(1_500_000)
        let first = try TestClient(port: s.port)
        try first.send(TestClient.get("/hello"))
        #expect(try first.response().text == "hello")
        #expect(reader.closedByPeer(seconds: 5), "the stalled answer goes first")
        // Busy now, so not idle: the next newcomer's room comes from the dribbler.
        try first.send(TestClient.get("/slow?1500"))
        try Self.waitUntil { s.server.stats.snapshot.workersBusy == 2 }
        let second = try TestClient(port: s.port)
        try second.send(TestClient.get("/hello"))
        #expect(try second.response().text == "hello")
        #expect(try dribbler.response().status == 408, "the head still arriving is told 408")
        #expect(try rendering.response().text == "slept 6000", "a render is never given up")
        #expect(try first.response().text == "slept 1500")
        let shed = s.server.stats.snapshot.shed
        #expect(shed["slow_head"] == 1 && shed["slow_read"] == 1 && s.server.stats.snapshot.refused == 0)
    }

    /// `minSendBytesPerSecond`: an answer read slower than the floor is cut once the grace
    /// has passed, long before the write timeout.
    @Test func anAnswerReadBelowTheFloorIsCut() throws {
        let s = try RunningServer {
            $0.minSendBytesPerSecond = 64 << 10
            $0.sendGraceMs = 300
            $0.writeTimeoutMs = 60_000
        }
        defer { s.stop() }
        let reader = try TestClient(port: s.port, receiveBuffer: 4096)
        try reader.send(TestClient.get("/big?\(32 << 20)"))
        let start = Date()
        // Nothing read for 2.5 s: the floor's check after the 0.3 s grace has cut it.
        usleep(2_500_000)
        #expect(reader.closedByPeer(seconds: 10))
        #expect(Date().timeIntervalSince(start) < 8, "cut by the floor, not the 60 s write timeout")
        // Counted by the loop just after it closes: polled, at most 10 s.
        for _ in 0..<1000 where s.server.stats.snapshot.cutSlowReaders == 0 { usleep(10_000) }
        #expect(s.server.stats.snapshot.cutSlowReaders == 1)
        // A client that reads is not cut.
        let good = try TestClient(port: s.port)
        try good.send(TestClient.get("/big?\(8 << 20)"))
        #expect(try good.response().body.count == 8 << 20)
    }
}
