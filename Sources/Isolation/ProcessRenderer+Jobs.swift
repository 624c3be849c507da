internal import CSandbox
import Core
import Foundation
import Glibc
import Stores
import Synchronization
import Syscalls

// A job on the workers: one try, the retry in a fresh worker after a death, and what each
// way a worker can end means for the request and the source (SPEC: Isolation).
extension ProcessRenderer {
    // MARK: Jobs

    /// How one try of a job on one worker ended.
    enum Outcome {
        case answered(FromWorker, [UInt8])
        /// `refused`: the service refused the plan, so the worker decoded nothing more.
        case failed(ServiceFailure, refused: Bool = false)
        /// The worker died holding it: the signal (0: it exited), and whether the service
        /// killed it (`forced`: the deadline, a bad answer).
        case died(signal: Int32, forced: String?, how: String)
    }

    /// One job: tried on a worker, and once more on a fresh one if that worker died with
    /// it (SPEC: Isolation). A source two workers died of is refused for `poisonSeconds`;
    /// a worker killed from outside both times is a 503 and blames no source.
    /// `accept`: the answer held to what it may say (SPEC: Isolation), and made into the
    /// job's value; a problem it finds is a 502 and the worker goes.
    func job<T>(
        _ file: OpenFile, _ request: ToWorker, order: (SourceDescription) throws(AspectError) -> RenderOrder,
        accept: (FromWorker, [UInt8]) -> Result<T, Distrusted>
    ) throws(ServiceFailure) -> T {
        let source = Self.identity(file)
        let now = Clock.now()
        if let bad = state.withLock({ s -> AspectError? in
            // Expired entries go as they are met, and all of them when the map grows large.
            if s.poisoned.count > 10_000 { s.poisoned = s.poisoned.filter { $0.value.until > now } }
            guard let p = s.poisoned[source] else { return nil }
            if p.until > now { return p.error }
            s.poisoned[source] = nil
            return nil
        }) {
            throw ServiceFailure(bad, stage: "worker", detail: "refused: it killed two render workers lately")
        }
        var first: (signal: Int32, forced: String?, how: String)?
        while true {
            // The source is read again from its start by the fresh worker.
            lseek(file.fd, 0, SEEK_SET)
            // The second try in a fresh worker (SPEC: Isolation), never in one that was
            // idle beside the one that died (whatever killed that may have hit it too).
            let worker = try checkout(fresh: first != nil)
            // The render's time, from when a worker has it (a fresh one's start is not the render's).
            let deadline = Clock.now() + UInt64(max(0, settings.deadlineMs) + 1000) * 1_000_000
            switch attempt(worker, file, request, order: order, deadline: deadline) {
            case .answered(let answer, let blob):
                switch accept(answer, blob) {
                case .success(let value):
                    state.withLock { $0.deaths = 0 }
                    retire(worker, ifOld: true)
                    return value
                case .failure(let problem):
                    finish(worker, forced: "protocol")
                    throw Self.protocolFailure(problem.reason)
                }
            case .failed(let failure, let refused):
                // A render that failed may have left the worker in any state: replaced
                // (unless the service refused its plan, and it read no more than a header).
                if failure.error.code == .workerProtocol {
                    _ = finish(worker, forced: "protocol")
                } else {
                    retire(worker, ifOld: refused)
                }
                throw failure
            case .died(let signal, let forced, let how):
                if forced == "deadline" {
                    throw ServiceFailure(
                        AspectError(
                            .processingTimeout,
                            "rendering took longer than limits.processingTimeoutMs (\(settings.deadlineMs) ms)"),
                        stage: "worker", detail: "worker \(worker.pid) killed at the deadline")
                }
                if first == nil {
                    first = (signal, forced, how)
                    settings.log("render worker \(worker.pid) died holding a job (\(how)); trying it once more")
                    continue
                }
                // Killed from outside (not by the service): nothing says the source did it.
                if signal == SIGKILL, forced == nil {
                    throw ServiceFailure(
                        AspectError(.workerLost, "the render was interrupted from outside; ask again"),
                        stage: "worker", detail: "worker \(worker.pid): \(how), after \(first?.how ?? "nothing")")
                }
                let error = AspectError(
                    .decodeCrashed,
                    "the source made the renderer crash twice; it is refused for limits.poisonSeconds "
                        + "(\(settings.poisonSeconds) s)")
                let until = Clock.now() + UInt64(settings.poisonSeconds) * 1_000_000_000
                state.withLock { $0.poisoned[source] = (until, error) }
                throw ServiceFailure(
                    error, stage: "worker", detail: "worker \(worker.pid): \(how), after \(first?.how ?? "nothing")")
            }
        }
    }

    /// One try of a job on `worker`: the request with the source beside it, the plan asked
    /// for (once) and given, the answer.
    func attempt(
        _ worker: Worker, _ file: OpenFile, _ request: ToWorker,
        order: (SourceDescription) throws(AspectError) -> RenderOrder, deadline: UInt64
    ) -> Outcome {
        var planned = false
        var refused = false
        do throws(Wire.Problem) {
            try Wire.send(request, on: worker.socket, fd: file.fd)
            while true {
                let at = Clock.now()
                let left = deadline > at ? Int32(min((deadline - at) / 1_000_000, UInt64(Int32.max))) : 0
                if settings.deadlineMs > 0, csandbox_wait_readable(worker.socket, max(1, left)) == 0 {
                    kill(worker.pid, SIGKILL)
                    return died(worker, forced: "deadline")
                }
                let (answer, blob) = try Wire.receiveAnswer(
                    on: worker.socket, limit: settings.maxResultBytes + Wire.answerOverhead)
                switch answer {
                case .needOrder(let description):
                    // Once a job, about a source an honest header could describe.
                    guard !planned, case .render = request else { throw Wire.Problem.malformed("a second plan asked") }
                    if let problem = AnswerCheck.description(description) { throw Wire.Problem.malformed(problem) }
                    planned = true
                    let reply: ToWorker
                    do throws(AspectError) {
                        reply = .order(try order(description))
                    } catch {
                        reply = .orderRefused(error)
                        refused = true
                    }
                    try Wire.send(reply, on: worker.socket)
                case .failed(let f): return .failed(Self.believable(f.failure), refused: refused)
                default: return .answered(answer, blob)
                }
            }
        } catch {
            // Nonsense from a worker is its fault, not the source's: a 502, and it goes.
            if case .malformed(let why) = error { return .failed(Self.protocolFailure(why)) }
            return died(worker, forced: nil)
        }
    }

    func died(_ worker: Worker, forced: String?) -> Outcome {
        let (signal, how) = finish(worker, forced: forced)
        return .died(signal: signal, forced: forced, how: how)
    }

    /// A worker that is done: killed if it is not dead yet, reaped, counted, replaced (at
    /// once, unless replacements keep dying). Its signal and how it ended.
    @discardableResult
    func finish(_ worker: Worker, forced: String?) -> (signal: Int32, how: String) {
        let ended = reap(worker, forced: forced)
        if state.withLock({ $0.nextSpawn <= Clock.now() }), let w = spawn() { addIdle(w) }
        slots.signal()
        return ended
    }
}
