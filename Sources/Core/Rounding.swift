/// SPEC's rounding: to the nearest integer, halves away from zero, and no side below 1.
enum Rounding {
    /// The largest value any computed side may take before it counts as "too large".
    /// Far above every configurable limit, far below `Int.max`, so conversion never traps.
    static let ceiling = 1_000_000_000_000.0

    /// Rounds `x` half away from zero; `nil` when it is not finite or beyond `ceiling`.
    static func round(_ x: Double) -> Int? {
        guard x.isFinite, abs(x) <= ceiling else { return nil }
        return Int(x.rounded(.toNearestOrAwayFromZero))
    }

    /// A side: rounded, at least 1; `nil` when not finite or beyond `ceiling`.
    static func side(_ x: Double) -> Int? {
        guard let r = round(x) else { return nil }
        return max(1, r)
    }
}
