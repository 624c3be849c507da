/// Strict number syntax for URL parameters: plain digits, optionally one `.` and more
/// digits. No signs, exponents, spaces, `nan` or `inf`, so every accepted spelling is a
/// finite, non-negative number, and a 400-digit one is refused rather than overflowing.
/// The configuration reads its numbers by the same rules.
public enum NumberSyntax {
    /// Whole parts longer than this are out of every range anyway.
    static let maxDigits = 12
    /// Fractions longer than this carry no more precision than a Double holds.
    static let maxFractionDigits = 20

    /// A non-negative integer in plain digits, or `nil`.
    public static func integer(_ s: Substring) -> Int? {
        guard !s.isEmpty, s.count <= maxDigits, s.utf8.allSatisfy(isDigit) else { return nil }
        return Int(s)
    }

    /// A non-negative decimal `D+` or `D+.D+`, or `nil`.
    public static func decimal(_ s: Substring) -> Double? {
        let parts = s.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.count <= maxDigits,
            whole.utf8.allSatisfy(isDigit)
        else { return nil }
        if parts.count == 2 {
            let frac = parts[1]
            guard !frac.isEmpty, frac.count <= maxFractionDigits, frac.utf8.allSatisfy(isDigit) else {
                return nil
            }
        }
        guard let value = Double(s), value.isFinite else { return nil }
        return value
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    /// `quoted`, for other targets' messages.
    public static func quote(_ value: some StringProtocol) -> String { quoted(value) }

    /// `decimalString`, for other targets.
    public static func text(_ x: Double) -> String { decimalString(x) }
}

/// Formats a value received from a client for an error message: quoted, and cut short
/// so a 10 KB parameter does not make a 10 KB message.
public func quoted(_ value: some StringProtocol) -> String {
    let limit = 64
    if value.count <= limit { return "'\(value)'" }
    return "'\(value.prefix(limit))…' (\(value.count) characters)"
}

/// Shortest decimal spelling of a Double that reads back to the same value.
public func decimalString(_ x: Double) -> String {
    if x == x.rounded(), abs(x) < 1e15 { return String(Int(x)) }
    return "\(x)"
}

/// The value of one hex digit (`0-9`, `a-f`, `A-F`), or `nil`.
func hexDigitValue(_ c: UInt8) -> UInt8? {
    switch c {
    case 0x30...0x39: c - 0x30
    case 0x61...0x66: c - 0x61 + 10
    case 0x41...0x46: c - 0x41 + 10
    default: nil
    }
}
