import Core
import HTTP
import Signing

// POST /purge (SPEC: Shared results and purging).
extension ServiceHandler {
    /// `POST /purge?src=PATH` (SPEC: Shared results and purging): every cached variant of
    /// the source (results and `/info` answers) and the source cache's copy removed, on a
    /// worker; `{"purged": N}`. Only with `Authorization: Bearer` and `security.adminToken`
    /// (constant-time); another method is a 405.
    func purge(_ request: HTTPRequestHead) -> Route {
        guard request.method == "POST" else {
            var r = HTTPResponse.error(
                405, code: AspectError.Code.methodNotAllowed.rawValue,
                message: "\(request.method) is not allowed on /purge; use POST")
            r.headers.append("Allow", "POST")
            return .respond(r)
        }
        let given = request.headers["Authorization"] ?? ""
        let expected = "Bearer " + config.security.adminToken
        guard Signer.same(given, expected) else {
            var r = Self.error(
                AspectError(.unauthorized, "POST /purge needs Authorization: Bearer and the admin token"))
            r.headers.append("WWW-Authenticate", "Bearer")
            return .respond(r)
        }
        let src: String
        do throws(AspectError) {
            let params = try QueryParameters.decode(request.query)
            guard params.pairs.count == 1, let only = params.pairs.first, only.name == "src", !only.value.isEmpty else {
                throw AspectError(.badParam, "POST /purge takes src=PATH and nothing else")
            }
            try ThumbRequest.checkSourcePath(only.value)
            src = only.value
        } catch {
            return .respond(Self.error(error))
        }
        let (results, sources, metrics) = (results, sources, metrics)
        return .work {
            let n = results.purge(source: src).count
            _ = sources.purge(src)
            metrics.purge(variants: n)
            return .text(200, "{\"purged\": \(n)}\n", contentType: "application/json")
        }
    }
}
