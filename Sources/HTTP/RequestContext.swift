/// What a handler may know of the server while it routes.
public struct RequestContext: Sendable {
    /// True once shutdown has begun (`/readyz` answers 503).
    public let draining: Bool
    /// The server's live figures, read when asked (`/metrics`).
    public let server: any ServerFigures

    public init(draining: Bool, server: any ServerFigures) {
        self.draining = draining
        self.server = server
    }
}

/// Where a server's live figures are read from, from any thread.
public protocol ServerFigures: Sendable {
    var snapshot: ServerSnapshot { get }
}

/// A server's figures at one moment.
public struct ServerSnapshot: Sendable, Equatable {
    public var connections = 0
    /// Jobs waiting for a worker.
    public var queueDepth = 0
    public var workersBusy = 0
    /// Connections refused for `maxConnections`.
    public var refused = 0
    /// Times a loop stopped accepting because accept(2) ran out of descriptors or memory.
    public var acceptsPaused = 0
    /// Connections given up for newcomers, by reason (`idle`, `answered`, `slow_head`, `slow_read`).
    public var shed: [String: Int] = [:]
    /// Answers cut for being read below `server.minSendBytesPerSecond`.
    public var cutSlowReaders = 0

    public init() {}
}
