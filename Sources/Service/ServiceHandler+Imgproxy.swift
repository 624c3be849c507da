import Core
import Foundation
import HTTP
import Imgproxy
import Signing

// imgproxy's URL format, translated to the native request (SPEC: imgproxy URLs).
extension ServiceHandler {
    /// imgproxy's URL format (SPEC: imgproxy URLs): its signature over the path, its
    /// options parsed into the native request, then the native flow (one cache entry with
    /// the native request that means the same).
    func imgproxy(_ request: HTTPRequestHead) -> Route {
        let (memoKey, served) = dialectMemo(request, dialect: "imgproxy")
        if let served { return served }
        let rawPath = request.rawPath
        let url: ImgproxyURL
        do throws(AspectError) {
            // Signed as sent (escapes kept), as imgproxy signs it; or as imgproxy reads it
            // after undoing what proxies do to a URL (`%3A` in the options).
            let (signature, path) = try ImgproxyURL.split(rawPath)
            if let imgproxySigner {
                guard
                    imgproxySigner.verify(signature, path: path)
                        || imgproxySigner.verify(signature, path: ImgproxyURL.redenormalized(path))
                else {
                    throw AspectError(.badSignature, "the imgproxy signature does not match this URL")
                }
            } else if signer != nil {
                throw AspectError(
                    .badSignature,
                    "imgproxy URLs need imgproxy.key and imgproxy.salt on a server that signs its URLs")
            }
            url = try ImgproxyURL.parse(
                path: rawPath, settings: imgproxySettings, limits: limits,
                now: Int64(Date().timeIntervalSince1970))
        } catch {
            return .respond(Self.error(error))
        }
        return dialectFlow(
            request, url.request, settle: ImgproxyURL.settle, memoKey: memoKey,
            disposition: Disposition(
                stem: url.filename ?? Disposition.stem(of: url.request.src), attachment: url.attachment))
    }
}
