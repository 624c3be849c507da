import HTTP
import Synchronization

/// Live figures of the server, readable from any thread: atomics, and the pool (itself
/// thread-safe) behind a Mutex, set once before the server runs.
public final class ServerStats: ServerFigures {
    let openConnections = Atomic<Int>(0)
    let draining = Atomic<Bool>(false)
    let refusedConnections = Atomic<Int>(0)
    let acceptPauses = Atomic<Int>(0)
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
        return s
    }
}
