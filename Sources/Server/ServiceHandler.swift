import Core
import Foundation
import HTTP
import HTTPServer
import Imaging

/// The service's routes: `/thumb`, `/healthz`, `/readyz`.
struct ServiceHandler: HTTPHandler {
    let config: Config
    let thumbnailer: Thumbnailer

    func route(_ request: HTTPRequestHead, context: RequestContext) -> Route {
        guard request.method == "GET" || request.method == "HEAD" else {
            var r = HTTPResponse.error(
                405, code: AspectError.Code.methodNotAllowed.rawValue,
                message: "\(request.method) is not allowed; use GET or HEAD")
            r.headers.append("Allow", "GET, HEAD")
            return .respond(r)
        }
        switch request.path {
        case "/healthz":
            return .respond(.text(200, "ok\n"))
        case "/readyz":
            return .respond(context.draining ? .text(503, "draining\n") : .text(200, "ready\n"))
        case "/thumb":
            return thumb(request)
        default:
            return .respond(Self.error(AspectError(.notFound, "no such route: \(request.path); try /thumb?src=…")))
        }
    }

    /// Parses on the loop (cheap, and bad requests never wait for a worker), renders on
    /// the pool.
    private func thumb(_ request: HTTPRequestHead) -> Route {
        let parsed: ThumbRequest
        do throws(AspectError) {
            parsed = try ThumbRequest.parse(query: request.query, limits: config.requestLimits)
        } catch {
            return .respond(Self.error(error))
        }
        let path = config.images.root + "/" + parsed.src
        let accept = request.headers["Accept"]
        let (thumbnailer, limits, maxAge) = (thumbnailer, config.requestLimits, config.http.maxAgeSeconds)
        return .work {
            do throws(ImagingError) {
                let r = try thumbnailer.thumbnail(path: path, request: parsed, requestLimits: limits, accept: accept)
                var headers = HTTPHeaders([
                    ("Content-Type", r.format.mimeType), ("Cache-Control", "public, max-age=\(maxAge), immutable"),
                ])
                if parsed.format == .auto { headers.append("Vary", "Accept") }
                return HTTPResponse(status: 200, headers: headers, body: .bytes(r.bytes), logNote: "cache=MISS")
            } catch {
                var r = Self.error(error.error)
                if !error.detail.isEmpty { r.logNote = "error=\(error.stage.rawValue): \(error.detail)" }
                return r
            }
        }
    }

    static func error(_ e: AspectError) -> HTTPResponse {
        // 500s say no more than that; the log has the rest.
        let message = e.code == .internalError ? "an internal error occurred" : e.message
        return .error(e.code.status, code: e.code.rawValue, message: message)
    }
}
