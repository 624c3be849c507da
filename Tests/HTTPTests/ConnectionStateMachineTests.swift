import Glibc
import HTTP
import TestSupport
import Testing

@testable import HTTPServer

/// The connection's state machine, event by event, without a socket: each path of the
/// loop, including the defects found by hostile testing (lingering close after errors and
/// refusals, a 503 at the drain deadline, 408 vs idle timeouts).
@Suite struct ConnectionStateMachineTests {
    typealias M = ConnectionStateMachine
    static let s: UInt64 = 1_000_000_000
    static let timeouts = M.Timeouts(header: 10 * s, idle: 60 * s, write: 30 * s, linger: 5 * s)

    func fresh(_ now: UInt64 = 0) -> M { M(now: now, timeouts: Self.timeouts) }

    @Test func aKeepAliveRequestGoesRoundAndTheConnectionIsIdleAgain() {
        var m = fresh()
        #expect(m.deadline == 10 * Self.s, "the head is due from the accept")
        #expect(m.interest == .read)
        #expect(m.bytesRead(now: 1) == .parse)
        #expect(m.state == .readingHead && m.deadline == 1 + 10 * Self.s)
        #expect(m.requestParsed(keepAlive: true, isHead: false) == .route)
        #expect(m.deadline == nil && m.interest == .hangUp)
        #expect(m.respondedNow() == .write(keepAlive: true, isHead: false))
        #expect(m.wrote(done: true, now: 2) == .parse, "pipelined requests are parsed next")
        #expect(m.state == .idle && m.deadline == 2 + 60 * Self.s && m.interest == .read)
    }

    @Test func workGoesToThePoolAndItsAnswerIsWritten() {
        var m = fresh()
        _ = m.bytesRead(now: 0)
        _ = m.requestParsed(keepAlive: true, isHead: true)
        #expect(m.routedToWork() == .submit)
        #expect(m.interest == .hangUp, "nothing more is read while a worker has the request")
        #expect(m.bytesRead(now: 1) == .none, "pipelined bytes wait in the buffer")
        #expect(m.responseReady() == .write(keepAlive: true, isHead: true))
    }

    @Test func aFullQueueIsA503WithRetryAfterAndTheConnectionServesOn() {
        var m = fresh()
        _ = m.bytesRead(now: 0)
        _ = m.requestParsed(keepAlive: true, isHead: false)
        _ = m.routedToWork()
        #expect(m.submitRefused() == .writeError(.queueFull, keepAlive: true))
        #expect(m.wrote(done: true, now: 1) == .parse)
        #expect(m.state == .idle)
    }

    @Test func aSlowWriterIsGivenTheWriteTimeoutFromItsLastProgress() {
        var m = fresh()
        _ = m.bytesRead(now: 0)
        _ = m.requestParsed(keepAlive: true, isHead: false)
        _ = m.respondedNow()
        #expect(m.wrote(done: false, now: 5) == .none)
        #expect(m.interest == [.write, .hangUp] && m.deadline == 5 + 30 * Self.s)
        #expect(m.wrote(done: false, now: 7) == .none)
        #expect(m.deadline == 7 + 30 * Self.s, "progress moves the deadline")
        #expect(m.timerFired(now: 7 + 29 * Self.s) == .none, "not due yet")
        #expect(m.timerFired(now: 7 + 30 * Self.s) == .close)
        #expect(m.state == .closed && m.interest.isEmpty)
    }

    @Test func aHeadThatDoesNotArriveInTimeIs408AndALingeringClose() {
        var m = fresh()
        _ = m.bytesRead(now: 0)
        #expect(m.needMore(parserIdle: false, now: 0) == .none)
        #expect(m.timerFired(now: 10 * Self.s) == .writeError(.requestTimeout, keepAlive: false))
        #expect(m.wrote(done: true, now: 10 * Self.s) == .shutdownWrite)
        #expect(m.state == .lingering && m.interest == .read && m.deadline == 15 * Self.s)
        #expect(m.bytesRead(now: 11 * Self.s) == .discardInput)
        #expect(m.peerClosed() == .close)
    }

    @Test func emptyLinesBetweenRequestsKeepTheConnectionIdle() {
        var m = fresh()
        _ = m.bytesRead(now: 3)
        #expect(m.needMore(parserIdle: true, now: 3) == .none)
        #expect(m.state == .idle && m.deadline == 3 + 60 * Self.s, "idle timeout, not the header one")
        #expect(m.timerFired(now: 3 + 60 * Self.s) == .close, "an idle connection closes without a 408")
    }

    /// Defect 4: after a 431, 414 or 400 the server half-closes and reads what the client
    /// still sends, so the kernel does not answer those bytes with a reset.
    @Test func aParseErrorIsWrittenThenTheConnectionLingers() {
        var m = fresh()
        _ = m.bytesRead(now: 0)
        #expect(m.parseFailed() == .writeError(.unparsable, keepAlive: false))
        #expect(m.wrote(done: false, now: 1) == .none, "a large client may read slowly")
        #expect(m.wrote(done: true, now: 2) == .shutdownWrite)
        #expect(m.bytesRead(now: 3) == .discardInput)
        #expect(m.timerFired(now: 2 + 5 * Self.s) == .close, "lingering is bounded")
    }

    /// Defect 4: a connection over the limit gets its 503 and a lingering close.
    @Test func aRefusedConnectionGets503ThenLingers() {
        var m = fresh()
        #expect(m.refused() == .writeError(.tooManyConnections, keepAlive: false))
        #expect(m.wrote(done: true, now: 1) == .shutdownWrite)
        #expect(m.state == .lingering)
    }

    @Test func aCloseAfterTheAnswerLingersOnlyWhenInputIsLeft() {
        var a = fresh()
        _ = a.bytesRead(now: 0)
        _ = a.requestParsed(keepAlive: false, isHead: false)
        _ = a.respondedNow()
        #expect(a.wrote(done: true, now: 1) == .close, "HTTP/1.0 or Connection: close, nothing more sent")
        var b = fresh()
        _ = b.bytesRead(now: 0)
        _ = b.requestParsed(keepAlive: false, isHead: false)
        _ = b.respondedNow()
        #expect(b.wrote(done: true, inputPending: true, now: 1) == .shutdownWrite)
    }

    @Test func drainingClosesIdleConnectionsAndAnswersTheRestWithClose() {
        var idle = fresh()
        #expect(idle.drainStarted() == .close)
        var busy = fresh()
        _ = busy.bytesRead(now: 0)
        _ = busy.requestParsed(keepAlive: true, isHead: false)
        _ = busy.routedToWork()
        #expect(busy.drainStarted() == .none)
        #expect(busy.responseReady() == .write(keepAlive: false, isHead: false))
        var reading = fresh()
        _ = reading.bytesRead(now: 0)
        #expect(reading.drainStarted() == .none, "a request half sent is still answered")
        #expect(reading.requestParsed(keepAlive: true, isHead: false) == .route)
        #expect(reading.respondedNow() == .write(keepAlive: false, isHead: false))
    }

    /// Defect 5: a request still with a worker (or queued) at the drain deadline gets a 503
    /// with Retry-After and Connection: close, never a bare close; its late answer is dropped.
    @Test func atTheDrainDeadlineAWaitingRequestGets503() {
        var m = fresh()
        _ = m.bytesRead(now: 0)
        _ = m.requestParsed(keepAlive: true, isHead: false)
        _ = m.routedToWork()
        _ = m.drainStarted()
        #expect(m.drainDeadlinePassed() == .writeError(.shuttingDown, keepAlive: false))
        #expect(m.responseReady() == .none, "the worker's answer comes too late and is dropped")
        #expect(m.wrote(done: true, now: 1) == .close)
        var idle = fresh()
        #expect(idle.drainDeadlinePassed() == .close)
    }

    @Test func aPeerThatLeavesWhileAWorkerHasItsRequestDropsTheAnswer() {
        var m = fresh()
        _ = m.bytesRead(now: 0)
        _ = m.requestParsed(keepAlive: true, isHead: false)
        _ = m.routedToWork()
        #expect(m.peerClosed() == .close)
        #expect(m.responseReady() == .none)
        #expect(m.peerClosed() == .none, "closed once")
    }

    @Test func theShuttingDownErrorCarriesRetryAfterAndCloses() {
        let e = HTTPError.shuttingDown(retryAfter: 3)
        #expect(e.status == 503 && e.close && e.retryAfterSeconds == 3)
        let r = HTTPResponse.error(e)
        #expect(r.headers["Retry-After"] == "3")
        #expect(!HTTPError.queueFull(retryAfter: 1).close)
    }
}

@Suite struct TimerQueueTests {
    @Test func entriesComeOutEarliestFirstAndOnlyWhenDue() {
        var q = TimerQueue()
        var times: [UInt64] = []
        var rng = SystemRandomNumberGenerator()
        for id in 0..<500 {
            let t = UInt64.random(in: 1...10_000, using: &rng)
            times.append(t)
            q.schedule(t, id: UInt64(id))
        }
        #expect(q.earliest == times.min())
        #expect(q.popDue(0) == nil)
        var out: [UInt64] = []
        while let e = q.popDue(5_000) { out.append(e.at) }
        #expect(out == times.filter { $0 <= 5_000 }.sorted())
        #expect(q.count == times.filter { $0 > 5_000 }.count)
    }
}

/// Defect 3: accept(2) out of descriptors pauses accepting instead of spinning.
@Suite struct AcceptBackoffTests {
    @Test func exhaustionPausesAndLogsOncePerInterval() {
        var b = AcceptBackoff()
        #expect(AcceptBackoff.isExhaustion(EMFILE) && AcceptBackoff.isExhaustion(ENFILE))
        #expect(!AcceptBackoff.isExhaustion(ECONNABORTED))
        #expect(b.pause(now: 0, backoff: 500) == 1, "the first pause is logged")
        #expect(b.resumeAt == 500)
        let early = b.resume(now: 499)
        #expect(!early)
        let due = b.resume(now: 500)
        #expect(due && b.resumeAt == nil)
        #expect(b.pause(now: 1_000, backoff: 500) == nil, "not logged again within the interval")
        #expect(b.pause(now: 2_000, backoff: 500) == nil)
        #expect(b.pause(now: AcceptBackoff.logInterval, backoff: 500) == 3, "the next line counts the pauses")
    }
}

/// Random sequences of every event, from a seeded generator: whatever arrives in whatever
/// order, the machine keeps its invariants. A closed connection asks for nothing more and
/// watches nothing; a connection waiting on its client always has a deadline; a write is
/// asked only where an answer can be written.
@Suite struct ConnectionStateMachinePropertyTests {
    @Test(arguments: 0..<20)
    func invariantsHoldUnderRandomEvents(seed: Int) {
        var g = SeededRandom(seed: UInt64(seed) &+ 1)
        let timeouts = ConnectionStateMachine.Timeouts(header: 10, idle: 60, write: 30, linger: 5)
        var m = ConnectionStateMachine(now: 0, timeouts: timeouts)
        var now: UInt64 = 0
        for step in 0..<400 {
            now += UInt64.random(in: 0...12, using: &g)
            let wasClosed = m.state == .closed
            let action: ConnectionStateMachine.Action
            switch Int.random(in: 0..<13, using: &g) {
            case 0: action = m.bytesRead(now: now)
            case 1: action = m.needMore(parserIdle: Bool.random(using: &g), now: now)
            case 2: action = m.requestParsed(keepAlive: Bool.random(using: &g), isHead: Bool.random(using: &g))
            case 3: action = m.parseFailed()
            case 4: action = m.respondedNow()
            case 5: action = m.routedToWork()
            case 6: action = m.submitRefused()
            case 7: action = m.responseReady()
            case 8: action = m.wrote(done: Bool.random(using: &g), inputPending: Bool.random(using: &g), now: now)
            case 9: action = m.timerFired(now: now)
            case 10: action = m.peerClosed()
            case 11: action = m.drainStarted()
            default: action = Int.random(in: 0..<8, using: &g) == 0 ? m.drainDeadlinePassed() : .none
            }
            if wasClosed { #expect(action == .none, "seed \(seed) step \(step): \(action) after the close") }
            switch m.state {
            case .closed:
                #expect(m.interest.isEmpty && m.deadline == nil, "seed \(seed) step \(step)")
            case .idle, .readingHead, .lingering:
                #expect(m.deadline != nil && m.interest == .read, "seed \(seed) step \(step): \(m.state)")
            case .routing, .processing:
                #expect(m.interest == .hangUp, "seed \(seed) step \(step)")
            case .writing:
                #expect(m.interest.contains(.hangUp), "seed \(seed) step \(step)")
            }
            switch action {
            case .write, .writeError:
                if case .writing = m.state {
                } else {
                    Issue.record("seed \(seed) step \(step): a write outside writing")
                }
            case .close:
                #expect(m.state == .closed)
            case .shutdownWrite:
                #expect(m.state == .lingering)
            default: break
            }
            // A closed machine is sent a few more events before a new connection starts.
            if m.state == .closed, Int.random(in: 0..<4, using: &g) == 0 {
                m = ConnectionStateMachine(now: now, timeouts: timeouts)
            }
        }
    }
}

@Suite struct RepeatFilterTests {
    @Test func aRepeatedLineIsHeldBackWithinTheWindowAndCountedAfter() {
        let f = RepeatFilter(windowNanoseconds: 100, capacity: 4)
        #expect(f.pass("heifload: ignoring nclx profile", now: 0) == "heifload: ignoring nclx profile")
        for t in 1...4 { #expect(f.pass("heifload: ignoring nclx profile", now: UInt64(t)) == nil) }
        #expect(f.pass("another", now: 5) == "another", "other lines are not held back")
        #expect(
            f.pass("heifload: ignoring nclx profile", now: 150)
                == "heifload: ignoring nclx profile (and 4 more like it held back)")
        #expect(f.pass("heifload: ignoring nclx profile", now: 151) == nil)
        for i in 0..<10 { _ = f.pass("line \(i)", now: 200) }
        #expect(f.pass("heifload: ignoring nclx profile", now: 201) != nil, "memory is bounded: forgotten, written")
    }
}

/// Whom a full table gives up (issue 44), decided from the machines alone.
@Suite struct SheddingTests {
    typealias M = ConnectionStateMachine
    static let s: UInt64 = 1_000_000_000
    static let timeouts = M.Timeouts(
        header: 10 * s, idle: 60 * s, write: 30 * s, linger: 5 * s, minSendBytesPerSecond: 1024, sendGrace: 5 * s)

    @Test func eachStateIsACandidateOrNot() {
        var m = M(now: 0, timeouts: Self.timeouts)
        #expect(m.shedCandidate(now: 1)?.reason == .idle)
        _ = m.bytesRead(now: 1 * Self.s, count: 100)
        #expect(m.shedCandidate(now: 3 * Self.s)?.reason == .slowHead)
        #expect(m.shedCandidate(now: 3 * Self.s)?.rate == 50, "100 bytes in 2 s")
        _ = m.requestParsed(keepAlive: true, isHead: false)
        #expect(m.shedCandidate(now: 3 * Self.s) == nil, "routing: never")
        _ = m.routedToWork()
        #expect(m.shedCandidate(now: 3 * Self.s) == nil, "rendering: never")
        _ = m.responseReady(now: 4 * Self.s)
        _ = m.wrote(done: false, bytes: 100_000, now: 4 * Self.s)
        #expect(m.shedCandidate(now: 4 * Self.s + Self.s / 2) == nil, "100 KB in half a second: healthy")
        #expect(m.shedCandidate(now: 6 * Self.s)?.reason == .slowRead, "nothing taken for a second and more")
        #expect(m.shed() == .close && m.state == .closed, "an answer mid-way is cut, never reused")
    }

    @Test func aHeadStillArrivingIsTold408() {
        var m = M(now: 0, timeouts: Self.timeouts)
        _ = m.bytesRead(now: 1, count: 5)
        #expect(m.shed() == .writeError(.requestTimeout, keepAlive: false))
    }

    @Test func lingeringIsAnswered() {
        var m = M(now: 0, timeouts: Self.timeouts)
        _ = m.bytesRead(now: 1, count: 5)
        _ = m.parseFailed()
        _ = m.wrote(done: true, now: 2)
        #expect(m.state == .lingering && m.shedCandidate(now: 3)?.reason == .answered)
    }

    /// Idle ones oldest first, then answered ones, then the slowest head or answer.
    @Test func theOrderOfChoice() {
        func c(_ id: UInt64, _ reason: Shedding.Reason, rate: Double = 0, since: UInt64) -> Shedding.Candidate {
            Shedding.Candidate(id: id, reason: reason, rate: rate, since: since)
        }
        let table = [
            c(1, .slowRead, rate: 5, since: 1), c(2, .slowHead, rate: 3, since: 9), c(3, .answered, since: 5),
            c(4, .idle, since: 8), c(5, .idle, since: 7),
        ]
        #expect(Shedding.choose(table)?.id == 5)
        #expect(Shedding.choose(table.filter { $0.reason != .idle })?.id == 3)
        #expect(Shedding.choose(table.filter { $0.rank == 2 })?.id == 2, "the lowest rate")
        #expect(Shedding.choose([c(6, .slowHead, rate: 3, since: 2), c(7, .slowRead, rate: 3, since: 1)])?.id == 7)
        #expect(Shedding.choose([]) == nil, "everyone busy: the newcomer is refused")
    }

    /// The floor cuts an answer read too slowly once the grace has passed; the write
    /// timeout still cuts one read not at all.
    @Test func theFloorCutsASlowAnswerAfterTheGrace() {
        var m = M(now: 0, timeouts: Self.timeouts)
        _ = m.bytesRead(now: 0, count: 40)
        _ = m.requestParsed(keepAlive: true, isHead: false)
        _ = m.respondedNow(now: 0)
        _ = m.wrote(done: false, bytes: 1000, now: 0)
        #expect(m.deadline == 5 * Self.s, "first checked when the grace ends")
        #expect(m.timerFired(now: 5 * Self.s) == .close && m.cutForRate, "1000 bytes in 5 s")
        // A client whose buffer took a lot at first and then nothing: cut on the next span.
        var stalled = M(now: 0, timeouts: Self.timeouts)
        _ = stalled.bytesRead(now: 0, count: 40)
        _ = stalled.requestParsed(keepAlive: true, isHead: false)
        _ = stalled.respondedNow(now: 0)
        _ = stalled.wrote(done: false, bytes: 4 << 20, now: 0)
        #expect(stalled.timerFired(now: 5 * Self.s) == .none, "4 MB in the first 5 s")
        #expect(stalled.timerFired(now: 6 * Self.s) == .none, "a pause of a second is not judged")
        #expect(stalled.timerFired(now: 10 * Self.s) == .close && stalled.cutForRate, "none in the next 5 s")
        var fast = M(now: 0, timeouts: Self.timeouts)
        _ = fast.bytesRead(now: 0, count: 40)
        _ = fast.requestParsed(keepAlive: true, isHead: false)
        _ = fast.respondedNow(now: 0)
        _ = fast.wrote(done: false, bytes: 1 << 20, now: 0)
        #expect(fast.timerFired(now: 5 * Self.s) == .none && !fast.cutForRate)
        #expect(fast.deadline == 6 * Self.s, "checked again a second later")
    }
}
