import Core
import HTTP
import Signing
import Thumbor

// thumbor's URL format, translated to the native request (SPEC: thumbor URLs).
extension ServiceHandler {
    /// Whether `path` goes to thumbor's route: with the imgproxy dialect off (`alone`),
    /// any path of two segments or more (a bad signature segment is then a 403); beside
    /// it, `/unsafe/…` and `/HASH/…` with HASH 28 characters ending in `=` (an imgproxy
    /// signature is never padded, so the two do not meet).
    static func isThumbor(_ path: Substring, alone: Bool) -> Bool {
        let body = path.dropFirst()
        guard let slash = body.firstIndex(of: "/"), slash != body.startIndex else { return false }
        let first = body[..<slash]
        return alone || first == "unsafe" || (first.utf8.count == 28 && first.hasSuffix("="))
    }

    /// thumbor's URL format: its signature (or `unsafe` where allowed), its path read into
    /// the native request, then the native flow (one cache entry with the native request
    /// that means the same on the source).
    func thumbor(_ request: HTTPRequestHead) -> Route {
        let (memoKey, served) = dialectMemo(request, dialect: "thumbor")
        if let served { return served }
        let rawPath = request.rawPath
        let url: ThumborURL
        do throws(AspectError) {
            // The signature first, as thumbor checks it: an unsigned caller learns nothing
            // of the rest.
            let body = Substring(rawPath).dropFirst()
            let slash = body.firstIndex(of: "/") ?? body.endIndex
            let (first, signed) = (body[..<slash], body[slash...].dropFirst())
            if first == "unsafe" {
                guard config.thumborUnsafeAllowed else {
                    throw AspectError(
                        .badSignature, "unsafe thumbor URLs are not answered here (thumbor.allowUnsafe); sign it")
                }
            } else if let thumborSigner {
                guard thumborSigner.verify(String(first), path: signed) else {
                    throw AspectError(.badSignature, "the thumbor signature does not match this URL")
                }
            } else {
                throw AspectError(.badSignature, "this server has no thumbor.securityKey to check a signed URL")
            }
            url = try ThumborURL.parse(Substring(rawPath), settings: thumborSettings, limits: limits)
        } catch {
            return .respond(Self.error(error))
        }
        return dialectFlow(request, url.request, settle: ThumborURL.settle, memoKey: memoKey)
    }
}
