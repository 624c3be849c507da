import Configuration
import Core
import Foundation
import Stores
import Synchronization
import TestSupport
import Testing

@testable import SourceStores

/// The re-check window of a remote source (SPEC: Sources), on a test clock: within
/// `sources.revalidateSeconds` the origin is not asked; past it one conditional request
/// decides (a 304 keeps the copy, a new ETag brings the new one); within
/// `sources.staleSeconds` after that the kept copy is served while the check runs. No test
/// here waits the window out: the clock is moved.
@Suite(.serialized) struct RemoteSourceTests {
    /// Monotonic nanoseconds that move only when told.
    final class TestClock: Sendable {
        let nanoseconds = Atomic<UInt64>(1_000_000_000)
        func advance(seconds: Double) { nanoseconds.add(UInt64(seconds * 1e9), ordering: .relaxed) }
        var read: @Sendable () -> UInt64 { { self.nanoseconds.load(ordering: .relaxed) } }
    }

    /// Bytes a sniffer takes for a JPEG: what the origin serves.
    static func jpeg(_ tag: UInt8) -> [UInt8] { [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: tag, count: 600) }

    static func store(_ origin: TestOrigin, clock: TestClock, staleSeconds: Int) -> RemoteSource {
        var settings = FetchSettings()
        settings.sources.revalidateSeconds = 60
        settings.sources.staleSeconds = staleSeconds
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aspect-remote-\(UUID().uuidString)")
        return RemoteSource(
            origin: HTTPOrigin(base: origin.base), settings: settings, cacheDir: dir.path, cacheMaxBytes: 1 << 20,
            clock: clock.read)
    }

    @Test func withinTheWindowTheOriginIsNotAskedAfterItOneConditionalRequestDecides() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let clock = TestClock()
        let store = Self.store(origin, clock: clock, staleSeconds: 0)
        origin.put("a.jpg", Self.jpeg(1))
        guard case .needsFetch = store.resolve("files/a.jpg") else {
            Issue.record("a source never fetched needs a fetch")
            return
        }
        let first = try store.fetch("files/a.jpg").get()
        #expect(origin.requests("/files/a.jpg") == 1)

        // 59 s later: current, and no request; changed at the origin meanwhile, unseen.
        origin.put("a.jpg", Self.jpeg(2))
        clock.advance(seconds: 59)
        guard case .ready(let kept) = store.resolve("files/a.jpg") else {
            Issue.record("within the window the kept copy is ready")
            return
        }
        #expect(kept == first && store.isCurrent(first) && origin.requests("/files/a.jpg") == 1)

        // Past the window, with no stale time: the request waits for the check, which
        // brings the new version.
        clock.advance(seconds: 2)
        guard case .needsFetch = store.resolve("files/a.jpg") else {
            Issue.record("past the window the check is due")
            return
        }
        #expect(!store.isCurrent(first))
        let changed = try store.fetch("files/a.jpg").get()
        #expect(changed.version != first.version && origin.requests("/files/a.jpg", conditional: true) == 1)

        // Unchanged after another window: a 304, the same identity, confirmed for another.
        clock.advance(seconds: 61)
        let same = try store.fetch("files/a.jpg").get()
        #expect(same == changed && origin.requests("/files/a.jpg", conditional: true) == 2)
        guard case .ready = store.resolve("files/a.jpg") else {
            Issue.record("a 304 starts a new window")
            return
        }
    }

    @Test func pastTheWindowTheKeptCopyIsServedWhileTheCheckRuns() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let clock = TestClock()
        let store = Self.store(origin, clock: clock, staleSeconds: 300)
        origin.put("b.jpg", Self.jpeg(1))
        let first = try store.fetch("files/b.jpg").get()
        origin.put("b.jpg", Self.jpeg(2))
        clock.advance(seconds: 61)
        // Stale: served at once, and a check started on its own threads.
        guard case .stale(let served) = store.resolve("files/b.jpg") else {
            Issue.record("within the stale time the kept copy is served")
            return
        }
        #expect(served == first)
        // Every resolve while the check runs serves the kept copy again, and counts.
        var now = served
        var servedStale = 1
        for _ in 0..<500 where now == first {
            usleep(10_000)
            switch store.resolve("files/b.jpg") {
            case .ready(let identity): now = identity
            case .stale: servedStale += 1
            default: break
            }
        }
        #expect(now != first && origin.requests("/files/b.jpg") == 2, "the check brought the new version")
        #expect(store.fetchFigures?.servedStale == servedStale)

        // Past the stale time too: the request waits for the check.
        clock.advance(seconds: 400)
        guard case .needsFetch = store.resolve("files/b.jpg") else {
            Issue.record("past the stale time the check is waited for")
            return
        }
    }
}
