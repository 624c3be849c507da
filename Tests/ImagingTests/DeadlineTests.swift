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
        // The largest photo at 1600×900 is decoded at 1/2 under either shrink-on-load rule
        // and takes about 130 ms in a release build here (aspect-bench): far past 10 ms.
        let big = try PhotoTests.photo("big.jpg")
        let r = try request("w=1600&h=900&mode=fill")
        let strict = try Thumbnailer(limits: ImagingLimits(processingTimeoutMs: 10))
        let e = Self.typedError { () throws(ImagingError) in
            _ = try strict.thumbnail(path: big, request: r, requestLimits: RequestLimits())
        }
        #expect(e?.stage == .timeout && e?.error.code == .processingTimeout, "\(String(describing: e))")
        #expect(e?.error.message.contains("limits.processingTimeoutMs (10 ms)") == true)
        // Without the limit, the same job completes.
        let free = try Thumbnailer(limits: ImagingLimits())
        let done = try free.thumbnail(path: big, request: r, requestLimits: RequestLimits())
        #expect(done.plan.output == Size(width: 1600, height: 900))
    }
}
