import HTTP

/// What the HTTP server needs to know, in its own terms (the executable fills it from
/// Core's configuration).
public struct ServerConfiguration: Sendable {
    public enum LogFormat: Sendable { case text, json }

    public var host = "127.0.0.1"
    public var port = 8080
    /// Event-loop threads, sharing one listening socket, each woken alone (EPOLLEXCLUSIVE).
    public var eventLoops = 1
    /// Threads doing the handlers' work.
    public var workers = 2
    /// Jobs that may wait for a worker before a request gets 503.
    public var queueDepth = 64
    public var maxConnections = 1024
    public var headerTimeoutMs = 10_000
    public var idleTimeoutMs = 60_000
    /// Longest a client may go without reading anything of a response it is sent.
    public var writeTimeoutMs = 30_000
    /// After an answer that closes, how long what the client still sends is read and
    /// dropped before the close (lingering close).
    public var lingerTimeoutMs = 5_000
    /// How long a loop stops accepting when accept(2) runs out of descriptors or memory.
    public var acceptBackoffMs = 500
    /// Longest in-flight requests have to finish after SIGTERM or SIGINT.
    public var drainTimeoutMs = 10_000
    /// Seconds a client is told to wait after a 503 for a full queue.
    public var retryAfterSeconds = 1
    public var parserLimits = ParserLimits()
    public var accessLog = true
    public var logFormat = LogFormat.text

    public init() {}
}
