/// The sizes a request head and body are held to.
public struct ParserLimits: Sendable, Equatable {
    /// Longest request target (414 beyond).
    public var maxTargetBytes = 8 * 1024
    /// Most header bytes, all field lines together (431 beyond).
    public var maxHeaderBytes = 16 * 1024
    /// Most header fields (431 beyond).
    public var maxHeaderCount = 100
    /// Largest body read and thrown away (GET and HEAD carry none; 413 beyond).
    public var maxBodyBytes = 64 * 1024

    public init() {}
}
