/// SPEC's rounding: to the nearest integer, halves away from zero, and no side below 1.
public enum Rounding {
    /// The largest value any computed side may take before it counts as "too large".
    /// Far above every configurable limit, far below `Int.max`, so conversion never traps.
    public static let ceiling = 1_000_000_000_000.0

    /// Rounds `x` half away from zero; `nil` when it is not finite or beyond `ceiling`.
    public static func round(_ x: Double) -> Int? {
        guard x.isFinite, abs(x) <= ceiling else { return nil }
        return Int(x.rounded(.toNearestOrAwayFromZero))
    }

    /// `Int(x)` made total, for every conversion of a number a request can reach: the
    /// integer part of `x` (toward zero, as `Int(_:)` takes it), clamped to ±`ceiling`,
    /// and 0 for NaN. Sums and differences of a few such values cannot overflow either.
    public static func int(_ x: Double) -> Int {
        guard !x.isNaN else { return 0 }
        return Int(Swift.min(Swift.max(x, -ceiling), ceiling))
    }

    /// A side: rounded, at least 1; `nil` when not finite or beyond `ceiling`.
    public static func side(_ x: Double) -> Int? {
        guard let r = round(x) else { return nil }
        return max(1, r)
    }
}
