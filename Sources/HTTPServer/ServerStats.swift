import HTTP
import Synchronization

/// Live figures of the server, readable from any thread: atomics, and the pool (itself
/// thread-safe) behind a Mutex, set once before the server runs.
public final class ServerStats: ServerFigures {
    let openConnections = Atomic<Int>(0)
    let draining = Atomic<Bool>(false)
    let refusedConnections = Atomic<Int>(0)
    let acceptPauses = Atomic<Int>(0)
    /// Connections given up for newcomers, by `Shedding.Reason`'s order.
    let shed = Mutex<[Int]>(Shedding.Reason.allCases.map { _ in 0 })
    /// Answers cut for being read below `server.minSendBytesPerSecond`.
    let cutSlowReaders = Atomic<Int>(0)
    let pool = Mutex<WorkerPool?>(nil)

    public init() {}

    public var snapshot: ServerSnapshot {
        var s = ServerSnapshot()
        s.connections = openConnections.load(ordering: .relaxed)
        if let pool = pool.withLock({ $0 }) {
            s.queueDepth = pool.queued
            s.workersBusy = pool.busy
        }
        s.refused = refusedConnections.load(ordering: .relaxed)
        s.acceptsPaused = acceptPauses.load(ordering: .relaxed)
        let shed = shed.withLock { $0 }
        for (i, reason) in Shedding.Reason.allCases.enumerated() { s.shed[reason.rawValue] = shed[i] }
        s.cutSlowReaders = cutSlowReaders.load(ordering: .relaxed)
        return s
    }
}
