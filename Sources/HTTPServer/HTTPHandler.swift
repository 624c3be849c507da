import HTTP
import Synchronization

/// What the server knows of the application: it routes each request, on the event loop,
/// to an answer now or to work for the pool.
public protocol HTTPHandler: Sendable {
    /// Called on the event loop thread: must not block. Cheap answers (health, errors,
    /// a file already on disk) come back at once; anything CPU-bound goes to the pool.
    func route(_ request: HTTPRequestHead, context: RequestContext) -> Route
}

public enum Route: Sendable {
    case respond(HTTPResponse)
    /// Runs on a worker thread; a full queue answers 503 instead.
    case work(@Sendable () -> HTTPResponse)
}

/// What a handler may know of the server while it routes.
public struct RequestContext: Sendable {
    /// True once shutdown has begun (`/readyz` answers 503).
    public let draining: Bool
    public let stats: ServerStats
}

/// Live figures of the server, readable from any thread.
///
/// `@unchecked Sendable`: the atomics are thread-safe; `pool` is set once, before the
/// server runs, and WorkerPool is itself thread-safe.
public final class ServerStats: @unchecked Sendable {
    let openConnections = Atomic<Int>(0)
    let draining = Atomic<Bool>(false)
    let refusedConnections = Atomic<Int>(0)
    let acceptPauses = Atomic<Int>(0)
    var pool: WorkerPool?

    public init() {}

    public var connections: Int { openConnections.load(ordering: .relaxed) }
    /// Jobs waiting for a worker.
    public var queueDepth: Int { pool?.queued ?? 0 }
    public var workersBusy: Int { pool?.busy ?? 0 }
    public var isDraining: Bool { draining.load(ordering: .relaxed) }
    /// Connections refused for `maxConnections`.
    public var refused: Int { refusedConnections.load(ordering: .relaxed) }
    /// Times a loop stopped accepting because accept(2) ran out of descriptors or memory.
    public var acceptsPaused: Int { acceptPauses.load(ordering: .relaxed) }
}
