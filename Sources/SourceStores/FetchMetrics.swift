import Stores
import Synchronization

/// What a remote source store counts; `/metrics` reads a snapshot of it (`FetchFigures`).
final class FetchMetrics: Sendable {
    typealias Outcome = FetchFigures.Outcome
    private let figures = Mutex(FetchFigures())

    func started() { figures.withLock { $0.inFlight += 1 } }

    func finished(_ outcome: Outcome, bytes: Int64, seconds: Double) {
        figures.withLock { f in
            f.inFlight -= 1
            f[outcome] += 1
            f.bytes += bytes
            f.fetchTime.observe(seconds)
        }
    }

    func recheckQueue(_ delta: Int) { figures.withLock { $0.recheckQueue += delta } }
    func servedStale() { figures.withLock { $0.servedStale += 1 } }

    var snapshot: FetchFigures { figures.withLock { $0 } }
}
