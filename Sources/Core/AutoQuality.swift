extension ThumbRequest {
    /// Whether the quality is searched: `q=auto`, or no quality asked (nor Save-Data's)
    /// under `output.quality=auto`.
    public func searchesQuality(_ limits: RequestLimits) -> Bool {
        autoQuality || (limits.autoQualityByDefault && quality == nil && !saveData && formatQuality.isEmpty)
    }
}

/// `q=auto` (SPEC: Efficiency): the lowest quality from `min` to `max` whose result keeps
/// SSIM of its luma against the unencoded result at `ssim` or above, found to within 2 of
/// the lowest in at most six encodes; `max` when even it falls short.
public struct AutoQuality: Equatable, Sendable, CustomStringConvertible {
    public var min: Int
    public var max: Int
    public var ssim: Double

    public init(min: Int = 30, max: Int = 90, ssim: Double = 0.985) {
        self.min = min
        self.max = max
        self.ssim = ssim
    }

    /// The formats whose quality it chooses: the lossy ones.
    public static let formats: Set<ImageFormat> = [.jpeg, .webp, .avif, .jxl]

    /// For the cache key: a result made under other settings is another result.
    public var description: String { "q-auto=\(min)-\(max)-\(decimalString(ssim))" }

    /// The search: `good(q)` encodes at `q` and says whether the picture is kept.
    /// Bisection of `min` … `max` until the bounds are within 2, the lowest good one found
    /// winning; `max` itself is never tried, since it is the answer both when it keeps the
    /// picture and when it does not. `good` is called five times for a span of 60.
    public func search<E: Error>(_ good: (Int) throws(E) -> Bool) throws(E) -> Int {
        var (bad, best) = (min - 1, max)
        while best - bad > 2 {
            let q = (bad + best) / 2
            if try good(q) { best = q } else { bad = q }
        }
        return best
    }
}
