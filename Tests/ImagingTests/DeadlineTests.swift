import Core
import Imaging
import Testing

/// `limits.processingTimeoutMs`: a job past its deadline stops with a timeout (the
/// server's 504).
@Suite struct DeadlineTests {
    static func typedError(_ body: () throws(ImagingError) -> Void) -> ImagingError? {
        do throws(ImagingError) {
            try body()
            return nil
        } catch {
            return error
        }
    }

    @Test func aJobPastItsDeadlineStopsWithATimeout() throws {
        // The largest photo decodes in about 90 ms here (BENCHMARKS.md): far past 10 ms.
        let big = try PhotoTests.photo("big.jpg")
        let r = try request("w=300&h=225&mode=fill")
        let strict = try Thumbnailer(limits: ImagingLimits(processingTimeoutMs: 10))
        let e = Self.typedError { () throws(ImagingError) in
            _ = try strict.thumbnail(path: big, request: r, requestLimits: RequestLimits())
        }
        #expect(e?.stage == .timeout && e?.error.code == .processingTimeout, "\(String(describing: e))")
        #expect(e?.error.message.contains("limits.processingTimeoutMs (10 ms)") == true)
        // Without the limit, the same job completes.
        let free = try Thumbnailer(limits: ImagingLimits())
        let done = try free.thumbnail(path: big, request: r, requestLimits: RequestLimits())
        #expect(done.plan.output == Size(width: 300, height: 225))
    }
}
