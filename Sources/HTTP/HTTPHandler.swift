/// What a server knows of the application: it routes each request, on the event loop, to
/// an answer now or to work for a pool. The application implements it and never sees the
/// server; the server (HTTPServer) calls it, and a test may call it with no server at all.
public protocol HTTPHandler: Sendable {
    /// Called on the event loop thread: must not block. Cheap answers (health, errors,
    /// a file already on disk) come back at once; anything CPU-bound goes to the pool.
    func route(_ request: HTTPRequestHead, context: RequestContext) -> Route
}

public enum Route: Sendable {
    case respond(HTTPResponse)
    /// Runs on a worker thread; a full queue answers 503 instead.
    case work(@Sendable () -> HTTPResponse)
    /// Started on the event loop, answered later from any thread through the `Responder`:
    /// for work that waits on something other than a CPU (a network fetch), so it holds
    /// no worker while it waits. It must not block the loop.
    case deferred(@Sendable (any Responder) -> Void)
}
