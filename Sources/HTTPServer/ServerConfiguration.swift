import Core
import HTTP

/// What the HTTP server needs to know, in its own terms (the executable fills it from the
/// configuration; the defaults are Core's `Defaults.Server`, the configuration's too).
public struct ServerConfiguration: Sendable {
    public enum LogFormat: Sendable { case text, json }

    public var host = Defaults.Server.host
    public var port = Defaults.Server.port
    /// Event-loop threads, sharing one listening socket, each woken alone (EPOLLEXCLUSIVE).
    public var eventLoops = 1
    /// Threads doing the handlers' work.
    public var workers = 2
    /// Jobs that may wait for a worker before a request gets 503.
    public var queueDepth = Defaults.Server.queueDepth
    public var maxConnections = 1024
    /// An answer read slower than this, over its write so far once `sendGraceMs` has
    /// passed, is cut (0: no floor).
    public var minSendBytesPerSecond = Defaults.Server.minSendBytesPerSecond
    public var sendGraceMs = Defaults.Server.sendGraceMs
    public var headerTimeoutMs = Defaults.Server.headerTimeoutMs
    public var idleTimeoutMs = Defaults.Server.idleTimeoutMs
    /// Longest a client may go without reading anything of a response it is sent.
    public var writeTimeoutMs = Defaults.Server.writeTimeoutMs
    /// After an answer that closes, how long what the client still sends is read and
    /// dropped before the close (lingering close).
    public var lingerTimeoutMs = Defaults.Server.lingerTimeoutMs
    /// How long a loop stops accepting when accept(2) runs out of descriptors or memory.
    public var acceptBackoffMs = Defaults.Server.acceptBackoffMs
    /// Longest in-flight requests have to finish after SIGTERM or SIGINT.
    public var drainTimeoutMs = Defaults.Server.drainTimeoutMs
    /// Seconds a client is told to wait after a 503 for a full queue.
    public var retryAfterSeconds = 1
    public var parserLimits = ParserLimits()
    public var accessLog = true
    public var logFormat = LogFormat.text

    public init() {}
}
