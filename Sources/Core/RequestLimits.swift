/// The limits a request and its plan are held to (from `limits.*` in the configuration).
public struct RequestLimits: Equatable, Sendable {
    /// Largest output side, in device pixels, after `dpr`.
    public var maxDimension: Int
    /// Largest `dpr`.
    public var maxDpr: Double

    public init(maxDimension: Int = 4096, maxDpr: Double = 4) {
        self.maxDimension = maxDimension
        self.maxDpr = maxDpr
    }
}
