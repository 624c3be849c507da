import HTTP
import Workers

/// The image workers: a bounded `ThreadPool` whose jobs make responses, each handed back
/// to its connection's event loop through `complete`, which must be cheap and thread-safe.
final class WorkerPool: Sendable {
    typealias Job = @Sendable () -> HTTPResponse

    /// Who the answer goes back to.
    struct Ticket: Sendable {
        var loop: Int
        var connection: UInt64
    }

    private let threads: ThreadPool
    let complete: @Sendable (Ticket, HTTPResponse) -> Void

    init(workers: Int, queueDepth: Int, complete: @escaping @Sendable (Ticket, HTTPResponse) -> Void) {
        // libvips and the decoders want more stack than a default secondary thread has.
        threads = ThreadPool(name: "aspect-worker", threads: workers, queueDepth: queueDepth, stackSize: 8 << 20)
        self.complete = complete
    }

    /// Queues a job; `false` when the queue is full: every worker busy or about to be, and
    /// `queueDepth` jobs waiting besides.
    func submit(_ ticket: Ticket, _ job: @escaping Job) -> Bool {
        let complete = complete
        let answer = Answer()
        // The answer goes back once the worker no longer counts as busy: a client that
        // reads /metrics on seeing its 504 sees the worker free.
        return threads.submit({ answer.response = job() }, then: { complete(ticket, answer.take()) })
    }

    /// A job's response, from the job to its follow-up. `@unchecked Sendable`: both run on
    /// the one worker thread that took the job, one after the other.
    private final class Answer: @unchecked Sendable {
        var response: HTTPResponse?

        func take() -> HTTPResponse { response ?? .error(500, code: "internal", message: "an internal error occurred") }
    }

    /// Jobs waiting for a worker (beyond those idle workers are about to take).
    var queued: Int { threads.queued }
    /// Jobs being worked on.
    var busy: Int { threads.busy }

    /// Lets the workers finish what they have and end.
    func stop() { threads.stop() }
}
