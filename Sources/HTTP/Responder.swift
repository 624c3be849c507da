/// How a deferred request is answered, once, from any thread: with a response, or with a
/// job for the server's workers (a full queue answers 503 then, as for `Route.work`).
public protocol Responder: Sendable {
    func respond(_ response: HTTPResponse)
    func work(_ job: @escaping @Sendable () -> HTTPResponse)
    /// True once the client has gone (its connection closed): work not yet started for it
    /// may be dropped.
    var clientGone: Bool { get }
}

extension Responder {
    /// This responder, with `body` told every answer it gives.
    public func observing(_ body: @escaping @Sendable (HTTPResponse) -> Void) -> any Responder {
        ObservingResponder(base: self, observe: body)
    }
}

/// A responder that tells an observer (a handler counting its statuses) each answer
/// before it goes.
struct ObservingResponder: Responder {
    let base: any Responder
    let observe: @Sendable (HTTPResponse) -> Void

    func respond(_ response: HTTPResponse) {
        observe(response)
        base.respond(response)
    }

    func work(_ job: @escaping @Sendable () -> HTTPResponse) {
        let observe = observe
        base.work {
            let response = job()
            observe(response)
            return response
        }
    }

    var clientGone: Bool { base.clientGone }
}
