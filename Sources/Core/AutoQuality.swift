import Foundation

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
public struct AutoQuality: Equatable, Sendable, Codable, CustomStringConvertible {
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

    /// Encodes a search may make, the one of the chosen quality included (SPEC).
    public static let encodes = 6

    /// What the SSIM curve is followed along: a line in `ln(1 − SSIM)` against the
    /// quality itself, or against what the encoder makes of it.
    public enum Axis: Sendable, Equatable {
        /// The quality (JPEG, AVIF, JPEG XL).
        case quality
        /// libwebp's compression value: its quality `c` (0 to 1) is mapped to
        /// `c · 2/3` below 0.75 and `2c − 1` from there (`QualityToCompression` in
        /// libwebp's quantizer code), so a step in the quality moves the quantizer three
        /// times as far above 75 as below it. WebP's curves are closer to a line along it
        /// (R² 0.98 against 0.92 along the quality, median over bench/quality.sh's 18).
        case webpCompression

        /// The axis for `format`'s encoder.
        public init(_ format: ImageFormat) {
            self = format == .webp ? .webpCompression : .quality
        }

        /// Where quality `q` lies on the axis.
        func position(_ q: Int) -> Double {
            switch self {
            case .quality: return Double(q)
            case .webpCompression:
                let c = Double(q) / 100
                return c < 0.75 ? c * 2 / 3 : 2 * c - 1
            }
        }

        /// How fast `ln(1 − SSIM)` falls along the axis where one measure is all there is
        /// to go by: the median over the team's photos and the samples from 30 to 70
        /// (0.02 a quality step in JPEG; 1.47 a unit of libwebp's value, about 0.0098 a
        /// quality step below 75, in WebP).
        var slope: Double {
            switch self {
            case .quality: 0.02
            case .webpCompression: 1.47
            }
        }
    }

    /// For the cache key: a result made under other settings is another result.
    public var description: String { "q-auto=\(min)-\(max)-\(decimalString(ssim))" }

    /// The widest a bracket may close at: the quality that kept the picture, 3 above the
    /// highest that did not, is then within 2 of the lowest that keeps it (SPEC).
    static let closed = 3

    /// The search: `measure(q)` encodes at `q` and gives the result's SSIM; the lowest
    /// quality found to keep the picture, with the highest that did not at most 3 below it
    /// (or the range's floor), so within 2 of the lowest. `max` is never measured: it is
    /// the answer both when it keeps the picture and when it does not, so the caller
    /// encodes it only if chosen.
    ///
    /// Each next quality is where the measures so far say the SSIM crosses the target:
    /// `ln(1 − SSIM)` is close to a straight line along `axis`, so the line through the
    /// two measures nearest the target (or one, at the axis' slope) is followed, rounded
    /// up so that the quality tried is likely to keep the picture; once one has, the
    /// quality 3 below it is tried, which is likely not to, and closes the search. Two
    /// rules hold the line in: a quality is only tried when, whatever it shows, bisection
    /// could still finish within `encodes`; and once the bracket is narrow enough for one
    /// more quality to close it whatever it shows, only such a quality is tried. Where the
    /// line points elsewhere, the nearest quality that keeps the rules is tried instead.
    /// On photos that is three encodes where bisection made five and the chosen one again
    /// (docs/design.md).
    public func search<E: Error>(along axis: Axis = .quality, _ measure: (Int) throws(E) -> Double) throws(E) -> Int {
        let target = Self.distortion(ssim)
        var (bad, best) = (min - 1, max)
        var bestMeasured = false
        var measured: [(q: Int, d: Double)] = []
        while best - bad > Self.closed {
            let remaining = Self.encodes - measured.count
            /// The encodes bisection needs at worst, after trying `q` and whatever it shows.
            func cost(_ q: Int) -> Int {
                1 + Swift.max(Self.bisections(q - bad), Self.bisections(best - q) + (bestMeasured ? 0 : 1))
            }
            let span = (bad + 1)..<best
            // Within the promise; and once one more quality can close the bracket, closing.
            let allowed = best - bad <= 2 * Self.closed ? span.map(cost).min() ?? 1 : remaining
            var q = Swift.min(Swift.max(predict(measured, target, along: axis), bad + 1), best - 1)
            // Just under the lowest that kept it: 3 under, which closes the search as well
            // when it falls short and goes further when it does not.
            if q == best - 1 { q = Swift.max(best - Self.closed, bad + 1) }
            if cost(q) > allowed {
                // The nearest that keeps the rules; the middle when none does (a range so
                // wide that bisection alone needs more encodes).
                q = span.filter { cost($0) <= allowed }.min { abs($0 - q) < abs($1 - q) } ?? (bad + best) / 2
            }
            let score = try measure(q)
            measured.append((q, Self.distortion(score)))
            if score >= ssim {
                (best, bestMeasured) = (q, true)
            } else {
                bad = q
            }
        }
        return best
    }

    /// `ln(1 − SSIM)`, kept finite for a perfect match.
    static func distortion(_ ssim: Double) -> Double { log(Swift.max(1e-9, 1 - ssim)) }

    /// Where the measures say the target is crossed, rounded up to the first quality at or
    /// past it (`max` past the range): the middle of the range before any measure.
    func predict(_ measured: [(q: Int, d: Double)], _ target: Double, along axis: Axis) -> Int {
        let nearest = measured.sorted { abs($0.d - target) < abs($1.d - target) }
        guard let a = nearest.first else { return (min + max + 1) / 2 }
        var slope = axis.slope
        if nearest.count > 1 {
            let b = nearest[1]
            let s = (a.d - b.d) / (axis.position(b.q) - axis.position(a.q))
            if s.isFinite, s > 0 { slope = s }
        }
        let crossing = axis.position(a.q) + (a.d - target) / slope
        guard crossing.isFinite else { return crossing < 0 ? min : max }
        return (min...max).first { axis.position($0) >= crossing - 1e-9 } ?? max
    }

    /// Probes bisection needs, at worst, to bring a bracket `width` wide to `closed`.
    static func bisections(_ width: Int) -> Int {
        var (w, n) = (width, 0)
        while w > closed {
            w -= w / 2
            n += 1
        }
        return n
    }
}
