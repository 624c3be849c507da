/// The limits a request and its plan are held to (from `limits.*` in the configuration).
public struct RequestLimits: Equatable, Sendable {
    /// Largest output side, in device pixels, after `dpr`.
    public var maxDimension: Int
    /// Largest `dpr`.
    public var maxDpr: Double
    /// `http.autoAvif`: `format=auto` may choose AVIF for a client that lists it.
    public var autoAvif: Bool
    /// `http.autoJxl`: `format=auto` may choose JPEG XL (before AVIF) for a client that lists it.
    public var autoJxl: Bool

    public init(maxDimension: Int = 4096, maxDpr: Double = 4, autoAvif: Bool = false, autoJxl: Bool = false) {
        self.maxDimension = maxDimension
        self.maxDpr = maxDpr
        self.autoAvif = autoAvif
        self.autoJxl = autoJxl
    }
}
