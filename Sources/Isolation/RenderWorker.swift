internal import CSandbox
import Core
import Foundation
import Stores
import Syscalls

/// A render worker's side (SPEC: Isolation): jobs from the service's socket, each done by
/// the in-process renderer, answered on the same socket, until the service closes it. It
/// runs sandboxed (`Sandbox.lock`); whatever a decoder does to it costs this process only.
public enum RenderWorker {
    /// Serves jobs on `socket` until the other end closes; the exit status. `landlock`: the
    /// ABI this worker is held by (0: none), told in its ready message. `beforeJob` runs
    /// before each job with its source; a failure it gives is the job's answer.
    public static func serve(
        socket: Int32, renderer: any Renderer, landlock: Int,
        beforeJob: (OpenFile) -> ServiceFailure? = { _ in nil }
    ) -> Int32 {
        // Ready: the service hands this worker no job before it hears this.
        let ready: [UInt8] = [Wire.ready, UInt8(clamping: landlock)]
        guard ready.withUnsafeBytes({ csandbox_send(socket, $0.baseAddress, 2, -1) }) == 2 else { return 0 }
        while true {
            let request: ToWorker
            let fd: Int32
            do throws(Wire.Problem) {
                (request, fd) = try Wire.receiveRequest(on: socket)
            } catch {
                if case .closed = error { return 0 }
                continue
            }
            guard fd >= 0 else { continue }
            let file = OpenFile(owning: fd)
            do throws(Wire.Problem) {
                if let refused = beforeJob(file) {
                    try Wire.send(FromWorker.failed(WireFailure(refused)), on: socket)
                } else {
                    try answer(request, file, socket: socket, renderer: renderer)
                }
            } catch {
                return 0
            }
        }
    }

    /// The settings the service sends a new worker as its first message (the handshake of
    /// `ProcessRenderer.Settings`), with their blob; nil when none came (the service went).
    public static func receiveSettings<T: Decodable>(_ type: T.Type, on socket: Int32, limit: Int64) -> (T, [UInt8])? {
        try? Wire.receive(type, on: socket, limit: limit)
    }

    static func answer(_ request: ToWorker, _ file: OpenFile, socket: Int32, renderer: any Renderer)
        throws(Wire.Problem)
    {
        var reply: FromWorker
        var blob: [UInt8] = []
        switch request {
        case .header(let reading):
            do throws(ServiceFailure) {
                reply = .header(try renderer.header(file, reading: reading))
            } catch {
                reply = .failed(WireFailure(Self.memory(error)))
            }
        case .describe(let reading):
            do throws(ServiceFailure) {
                var facts = try renderer.describe(file, reading: reading)
                blob = facts.previewRGBA
                facts.previewRGBA = []
                reply = .facts(facts)
            } catch {
                reply = .failed(WireFailure(Self.memory(error)))
            }
        case .render(let reading, let wantFacts):
            var lost: Wire.Problem?
            do throws(ServiceFailure) {
                let r = try renderer.render(file, reading: reading, wantFacts: wantFacts) {
                    source throws(AspectError) -> RenderOrder in
                    // The service plans: ask it, and wait for its answer.
                    let asked: Result<ToWorker, Wire.Problem>
                    do throws(Wire.Problem) {
                        try Wire.send(FromWorker.needOrder(source), on: socket)
                        asked = .success(try Wire.receiveRequest(on: socket).0)
                    } catch {
                        asked = .failure(error)
                    }
                    switch asked {
                    case .failure(let problem):
                        lost = problem
                        throw AspectError(.internalError, "the service went away")
                    case .success(.order(let order)): return order
                    case .success(.orderRefused(let error)): throw error
                    case .success: throw AspectError(.internalError, "the service answered a plan with something else")
                    }
                }
                var facts = r.facts
                let preview = facts?.previewRGBA ?? []
                facts?.previewRGBA = []
                blob = r.bytes + preview
                reply = .rendered(
                    format: r.format, quality: r.quality, facts: facts, resultBytes: r.bytes.count, chosen: r.chosen)
            } catch {
                if let lost { throw lost }
                reply = .failed(WireFailure(Self.memory(error)))
            }
        case .order, .orderRefused:
            reply = .failed(
                WireFailure(ServiceFailure(AspectError(.internalError, "a plan came with no job"), stage: "worker")))
        }
        try Wire.send(reply, blob: blob, on: socket)
    }

    /// A render that failed for want of memory: the worker's address-space limit, a 413
    /// (SPEC: Isolation), not the decoder's fault.
    static func memory(_ failure: ServiceFailure) -> ServiceFailure {
        let detail = failure.detail.lowercased()
        guard failure.error.code == .internalError || failure.error.code == .unsupportedSource,
            detail.contains("out of memory") || detail.contains("unable to allocate")
                || detail.contains("cannot allocate") || detail.contains("memory allocation")
        else { return failure }
        return ServiceFailure(
            AspectError(
                .sourceTooLarge,
                "rendering the source needs more memory than limits.workerMemoryBytes allows"),
            stage: failure.stage, detail: failure.detail)
    }
}
