internal import CLinux
import Foundation

/// Threads taking jobs from one bounded queue: `threads` run at once, at most `queueDepth`
/// wait beyond those an idle thread is about to take. The image workers and the fetch
/// threads are each one of these. Threads start on the first job, so a pool that is never
/// used (fetching, with a folder root) costs no thread.
///
/// `@unchecked Sendable`: every mutable field is guarded by `condition`'s lock.
public final class ThreadPool: @unchecked Sendable {
    public typealias Job = @Sendable () -> Void

    private let condition = NSCondition()
    private var waiting: [(job: Job, then: Job?)] = []
    private var head = 0
    private var running = 0
    private var started = 0
    private var stopping = false
    private let name: String
    private let threads: Int
    private let queueDepth: Int
    private let stackSize: Int?

    /// `stackSize` in bytes, for threads that need more than a secondary thread's default
    /// (libvips and the decoders).
    public init(name: String, threads: Int, queueDepth: Int, stackSize: Int? = nil) {
        self.name = name
        self.threads = max(1, threads)
        self.queueDepth = max(0, queueDepth)
        self.stackSize = stackSize
    }

    /// Queues `job`; false when the queue is full (or the pool stopped): every thread busy
    /// or about to be, and `queueDepth` jobs waiting besides. `then` runs on the same thread
    /// once the job no longer counts as busy (a response handed back after it, so whoever
    /// reads `busy` on seeing the response sees the worker free).
    public func submit(_ job: @escaping Job, then: Job? = nil) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping, waiting.count - head < queueDepth + (threads - running) else { return false }
        waiting.append((job, then))
        // A thread for this job when every started one is busy or spoken for.
        if started < threads, waiting.count - head > started - running { startThread() }
        condition.signal()
        return true
    }

    /// Jobs waiting for a thread (beyond those idle threads are about to take).
    public var queued: Int {
        condition.lock()
        defer { condition.unlock() }
        return max(0, waiting.count - head - (threads - running))
    }

    /// Jobs being worked on.
    public var busy: Int {
        condition.lock()
        defer { condition.unlock() }
        return running
    }

    /// Lets the threads finish what is queued and end; later submissions are refused.
    public func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    /// Called with the lock held.
    private func startThread() {
        // Each thread holds the pool until it ends, so a pool dropped after `stop()` lives
        // until its last thread has left `work()`.
        let label = "\(name)-\(started)"
        let t = Thread {
            clinux_name_thread(label)  // what `ps` and /proc show
            self.work()
        }
        t.name = label
        if let stackSize { t.stackSize = stackSize }
        started += 1
        t.start()
    }

    private func work() {
        while true {
            condition.lock()
            while head == waiting.count && !stopping { condition.wait() }
            if head == waiting.count {
                condition.unlock()
                return
            }
            let (job, then) = waiting[head]
            head += 1
            if head > 64, head * 2 > waiting.count {
                waiting.removeFirst(head)
                head = 0
            }
            running += 1
            condition.unlock()

            job()

            condition.lock()
            running -= 1
            condition.unlock()
            then?()
        }
    }
}
