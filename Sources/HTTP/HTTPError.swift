/// An answer the HTTP layer gives on its own, not the application: a request that cannot
/// be parsed, a slow or excess client, a full queue, a shutdown. It carries its status, a
/// stable code and a message, and whether the connection must close after it, so no status
/// number or code string is written anywhere else in the server.
public struct HTTPError: Error, Sendable, Equatable {
    public var status: Int
    public var code: String
    public var message: String
    /// The connection closes after the answer (the request could not be framed, or the
    /// server will not read more from this client).
    public var close: Bool
    /// Sent as `Retry-After` when set.
    public var retryAfterSeconds: Int?

    public init(_ status: Int, _ code: String, _ message: String, close: Bool = true, retryAfterSeconds: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.close = close
        self.retryAfterSeconds = retryAfterSeconds
    }

    public static func badRequest(_ message: String) -> HTTPError { HTTPError(400, "bad_request", message) }

    /// The bytes received cannot begin an HTTP/1.x request (TLS, binary, bare CRs).
    public static let notHTTP = HTTPError(
        400, "bad_request", "this is an HTTP/1.1 service: the bytes received cannot start a request line")

    /// Anything unforeseen; the message says no more than that.
    public static let `internal` = HTTPError(500, "internal", "an internal error occurred")

    /// The request head did not arrive within the header timeout.
    public static let requestTimeout = HTTPError(408, "request_timeout", "the request head did not arrive in time")

    /// Over `maxConnections`: refused at once.
    public static func tooManyConnections(retryAfter: Int) -> HTTPError {
        HTTPError(
            503, "too_many_connections", "the server has too many open connections; retry shortly",
            retryAfterSeconds: retryAfter)
    }

    /// Every worker busy and the queue full; the connection may serve on.
    public static func queueFull(retryAfter: Int) -> HTTPError {
        HTTPError(
            503, "queue_full", "the server is busy: its processing queue is full; retry shortly", close: false,
            retryAfterSeconds: retryAfter)
    }

    /// The drain deadline passed before this request's answer was ready.
    public static func shuttingDown(retryAfter: Int) -> HTTPError {
        HTTPError(
            503, "shutting_down", "the server is shutting down and could not finish this request; retry",
            retryAfterSeconds: retryAfter)
    }
}
