import Foundation
import HTTP

/// A bounded pool of threads for CPU-bound work, with a queue of at most `queueDepth`
/// waiting jobs. Finished responses are handed back to the event loop through
/// `complete`, which must be cheap and thread-safe.
///
/// `@unchecked Sendable`: every mutable field is guarded by `condition`'s lock.
final class WorkerPool: @unchecked Sendable {
    typealias Job = @Sendable () -> HTTPResponse

    /// Who the answer goes back to.
    struct Ticket: Sendable {
        var loop: Int
        var connection: UInt64
    }

    private let condition = NSCondition()
    private var waiting: [(ticket: Ticket, job: Job)] = []
    private var head = 0
    private var running = 0
    private var stopping = false
    private let queueDepth: Int
    private let workers: Int
    let complete: @Sendable (Ticket, HTTPResponse) -> Void

    init(workers: Int, queueDepth: Int, complete: @escaping @Sendable (Ticket, HTTPResponse) -> Void) {
        self.queueDepth = queueDepth
        self.workers = max(1, workers)
        self.complete = complete
        for i in 0..<self.workers {
            // Each thread holds the pool until it ends, so a pool dropped after `stop()`
            // lives until its last worker has left `work()`.
            let t = Thread { self.work() }
            t.name = "aspect-worker-\(i)"
            // libvips and the decoders want more stack than a default secondary thread has.
            t.stackSize = 8 << 20
            t.start()
        }
    }

    /// Queues a job; `false` when the queue is full: every worker busy or about to be,
    /// and `queueDepth` jobs waiting besides. (A job handed over but not yet picked up by
    /// an idle worker counts against that worker, not the queue.)
    func submit(_ ticket: Ticket, _ job: @escaping Job) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping, waiting.count - head < queueDepth + (workers - running) else { return false }
        waiting.append((ticket, job))
        condition.signal()
        return true
    }

    /// Jobs waiting for a worker (beyond those idle workers are about to take).
    var queued: Int {
        condition.lock()
        defer { condition.unlock() }
        return max(0, waiting.count - head - (workers - running))
    }

    /// Jobs being worked on.
    var busy: Int {
        condition.lock()
        defer { condition.unlock() }
        return running
    }

    /// Lets the workers finish what they have and end.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while head == waiting.count && !stopping { condition.wait() }
            if head == waiting.count {
                condition.unlock()
                return
            }
            let (ticket, job) = waiting[head]
            head += 1
            if head > 64, head * 2 > waiting.count {
                waiting.removeFirst(head)
                head = 0
            }
            running += 1
            condition.unlock()

            let response = job()

            condition.lock()
            running -= 1
            condition.unlock()
            complete(ticket, response)
        }
    }
}
