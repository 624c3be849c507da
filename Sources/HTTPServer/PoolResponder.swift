import HTTP
import Synchronization

/// The server's `Responder`: answers go back to the connection's loop through the same
/// completions as the pool's, and work goes to the pool.
struct PoolResponder: Responder {
    let ticket: WorkerPool.Ticket
    let pool: WorkerPool
    let retryAfterSeconds: Int
    /// Set by the loop when the connection closes.
    let gone: ClientGone

    func respond(_ response: HTTPResponse) { pool.complete(ticket, response) }

    func work(_ job: @escaping @Sendable () -> HTTPResponse) {
        if !pool.submit(ticket, job) { respond(.error(.queueFull(retryAfter: retryAfterSeconds))) }
    }

    var clientGone: Bool { gone.flag.load(ordering: .relaxed) }
}

/// Whether a connection has closed, shared between its loop and what works for it.
final class ClientGone: Sendable {
    let flag = Atomic<Bool>(false)
}
