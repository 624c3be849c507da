import Foundation

/// Threads for work that waits on a network: `threads` run at once, at most `queueDepth`
/// wait. Apart from the image workers, so a stalled origin holds none of them.
///
/// `@unchecked Sendable`: every mutable field is guarded by `condition`'s lock.
final class FetchPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var waiting: [@Sendable () -> Void] = []
    private var head = 0
    private let queueDepth: Int

    init(threads: Int, queueDepth: Int) {
        self.queueDepth = queueDepth
        for i in 0..<max(1, threads) {
            let t = Thread { self.work() }
            t.name = "aspect-fetch-\(i)"
            t.start()
        }
    }

    /// Queues `job`; false when `queueDepth` jobs are already waiting.
    func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard waiting.count - head < queueDepth else { return false }
        waiting.append(job)
        condition.signal()
        return true
    }

    private func work() {
        while true {
            condition.lock()
            while head == waiting.count { condition.wait() }
            let job = waiting[head]
            head += 1
            if head > 64, head * 2 > waiting.count {
                waiting.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job()
        }
    }
}
