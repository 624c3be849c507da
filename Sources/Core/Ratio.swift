/// An aspect ratio, width / height, from `4:3`, `16:9`, `1.5` or `1`.
public struct Ratio: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The smallest and largest ratio accepted: 1:10000 and 10000:1.
    public static let range: ClosedRange<Double> = 0.0001...10_000

    /// Width divided by height; always finite, positive and inside `range`.
    public let value: Double

    /// A ratio from a value; `nil` when it is not finite or outside `range`.
    public init?(_ value: Double) {
        guard value.isFinite, Ratio.range.contains(value) else { return nil }
        self.value = value
    }

    /// Parses `W:H` (each a positive decimal) or a single positive decimal.
    public static func parse(_ text: some StringProtocol) throws(AspectError) -> Ratio {
        let s = Substring(text)
        let sides = s.split(separator: ":", omittingEmptySubsequences: false)
        let value: Double?
        switch sides.count {
        case 1:
            value = NumberSyntax.decimal(s)
        case 2:
            if let w = NumberSyntax.decimal(sides[0]), let h = NumberSyntax.decimal(sides[1]),
                w > 0, h > 0
            {
                value = w / h
            } else {
                value = nil
            }
        default:
            value = nil
        }
        guard let value, value > 0, let ratio = Ratio(value) else {
            throw .badParam(
                "ratio must be W:H with positive numbers (4:3, 16:9) or a positive decimal (1.5),"
                    + " between 1:10000 and 10000:1, got \(quoted(s))")
        }
        return ratio
    }

    /// The height of a box `width` wide at this ratio, rounded as SPEC rounds (halves away
    /// from zero); nil when beyond any size. The one place `w`+`ratio` becomes `h`.
    public func height(forWidth width: Double) -> Double? { Rounding.round(width / value).map(Double.init) }

    /// The width of a box `height` high at this ratio, rounded the same way.
    public func width(forHeight height: Double) -> Double? { Rounding.round(height * value).map(Double.init) }

    public var description: String { decimalString(value) }
}
