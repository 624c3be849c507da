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
    /// Started on the event loop, answered later from any thread through the `Responder`:
    /// for work that waits on something other than a CPU (a network fetch), so it holds
    /// no worker while it waits. It must not block the loop.
    case deferred(@Sendable (Responder) -> Void)
}

/// How a deferred request is answered, once, from any thread: with a response, or with a
/// job for the worker pool (a full queue answers 503 then, as for `Route.work`).
public struct Responder: Sendable {
    let ticket: WorkerPool.Ticket
    let pool: WorkerPool
    let complete: @Sendable (WorkerPool.Ticket, HTTPResponse) -> Void
    let retryAfterSeconds: Int
    /// Told each answer before it goes (a handler counting its statuses).
    var observe: (@Sendable (HTTPResponse) -> Void)?

    public func respond(_ response: HTTPResponse) {
        observe?(response)
        complete(ticket, response)
    }

    public func work(_ job: @escaping @Sendable () -> HTTPResponse) {
        let observe = observe
        let submitted = pool.submit(ticket) {
            let response = job()
            observe?(response)
            return response
        }
        if !submitted { respond(.error(.queueFull(retryAfter: retryAfterSeconds))) }
    }

    /// This responder, with `body` told every answer it gives, after any observer before.
    public func observing(_ body: @escaping @Sendable (HTTPResponse) -> Void) -> Responder {
        var r = self
        let earlier = observe
        r.observe = { response in
            earlier?(response)
            body(response)
        }
        return r
    }
}

/// What a handler may know of the server while it routes.
public struct RequestContext: Sendable {
    /// True once shutdown has begun (`/readyz` answers 503).
    public let draining: Bool
    public let stats: ServerStats
}

/// Live figures of the server, readable from any thread: atomics, and the pool (itself
/// thread-safe) behind a Mutex, set once before the server runs.
public final class ServerStats: Sendable {
    let openConnections = Atomic<Int>(0)
    let draining = Atomic<Bool>(false)
    let refusedConnections = Atomic<Int>(0)
    let acceptPauses = Atomic<Int>(0)
    let pool = Mutex<WorkerPool?>(nil)

    public init() {}

    public var connections: Int { openConnections.load(ordering: .relaxed) }
    /// Jobs waiting for a worker.
    public var queueDepth: Int { pool.withLock { $0 }?.queued ?? 0 }
    public var workersBusy: Int { pool.withLock { $0 }?.busy ?? 0 }
    public var isDraining: Bool { draining.load(ordering: .relaxed) }
    /// Connections refused for `maxConnections`.
    public var refused: Int { refusedConnections.load(ordering: .relaxed) }
    /// Times a loop stopped accepting because accept(2) ran out of descriptors or memory.
    public var acceptsPaused: Int { acceptPauses.load(ordering: .relaxed) }
}
