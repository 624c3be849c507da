internal import CLinux
import Configuration
import Core
import Foundation
import Glibc
import Hashing
import Remote
import Stores
import Synchronization
import Syscalls
import Workers

// A download's steps: the redirects followed, what refuses it, the body kept.
extension RemoteSource {
    /// The download of `url` into `temp`, redirects to the same origin followed (at most
    /// `sources.maxRedirects`); a disk that fails the write moves it into memory.
    func follow(
        _ first: String, _ firstHeaders: [String], into temp: inout (path: String, fd: Int32),
        unkeptWhy: inout String
    ) -> Result<CurlClient.Transfer, ServiceFailure> {
        let limits = CurlClient.Limits(settings.sources, maxBytes: settings.maxBytes)
        var (url, headers) = (first, firstHeaders)
        var hops = 0
        while true {
            ftruncate(temp.fd, 0)
            lseek(temp.fd, 0, SEEK_SET)
            let r = client.download(url, headers: headers, into: temp.fd, limits: limits)
            if r.writeFailed, !temp.path.isEmpty, let memory = Self.memoryFile() {
                // The cache's disk is full (or failing): the same request again, into memory.
                unkeptWhy = "writing a download failed (\(r.error))"
                close(temp.fd)
                unlink(temp.path)
                temp = memory
                continue
            }
            guard r.ok, [301, 302, 303, 307, 308].contains(r.status), !r.redirect.isEmpty else { return .success(r) }
            let next = r.redirect
            guard Self.sameOrigin(url, next) else {
                return .failure(
                    failure(
                        .upstreamError, "the origin redirected to another host, which is not followed",
                        "\(r.status) from \(Self.redacted(url)) to \(Self.redacted(next))"))
            }
            hops += 1
            guard hops <= settings.sources.maxRedirects else {
                return .failure(
                    failure(
                        .upstreamError,
                        "the origin redirected more than sources.maxRedirects (\(settings.sources.maxRedirects)) times",
                        "last redirect to \(Self.redacted(next))"))
            }
            // A signed request's headers name the first URL: a redirect is followed bare.
            url = next
            headers = []
        }
    }

    /// A download stopped at the size limit or failed below HTTP; nil when an answer came.
    func refusal(_ r: CurlClient.Transfer) -> Fetched? {
        if r.tooLarge {
            return (
                .failure(
                    failure(
                        .sourceTooLarge,
                        "the source is over limits.maxSourceBytes (\(settings.maxBytes) bytes); the download was stopped there",
                        "content-length \(r.contentLength), \(r.bytes) bytes received")), .tooLarge, r.bytes
            )
        }
        if let failed = r.failure {
            return (
                Self.transportFailure(failed, code: r.code, r.error, timeoutMs: settings.sources.timeoutMs),
                failed == .timedOut ? .timeout : .error, r.bytes
            )
        }
        return nil
    }

    /// A whole 2xx body in `body` (downloaded at `path`, or in memory when `path` is
    /// empty): refused when it is not an image, else kept in the source cache (or held
    /// unkept when the cache cannot take it), its identity by its validators or digest.
    func keep(
        _ src: String, _ r: CurlClient.Transfer, body: OpenFile, path: String, known: SourceCache.Record?,
        unkeptWhy: String
    ) -> Fetched {
        // What is not an image is not kept: an HTML error page sent with a 200, a
        // compressed archive.
        if let kind = SourceSniffer.notAnImage(body.read(count: min(Int(r.bytes), SourceSniffer.prefixLength)) ?? []) {
            if !path.isEmpty { unlink(path) }
            return (
                .failure(
                    failure(
                        .unsupportedSource, "the origin's answer is not an image (it looks like \(kind))",
                        "\(r.bytes) bytes, content-type \(r.contentType)")), .error, r.bytes
            )
        }
        var record = SourceCache.Record(
            src: src, etag: r.etag, lastModified: r.lastModified, bytes: r.bytes,
            digest: "")
        if record.etag.isEmpty, record.lastModified.isEmpty {
            record.digest = Self.digest(body, r.bytes)
        } else if let known, !record.etag.isEmpty, record.etag == known.etag {
            // The whole body again under the ETag already held (a 304 was due): the
            // bytes decide, so two versions never share one identity.
            let old = known.digest.isEmpty ? Self.digest(path: cache.bodyPath(known)) : known.digest
            let new = Self.digest(body, r.bytes)
            record.digest = new == old ? known.digest : new
        }
        if path.isEmpty {
            return (.success(holdUnkept(record, body, why: unkeptWhy)), .downloaded, r.bytes)
        }
        guard fsync(body.fd) == 0 else {
            let why = "fsync: \(String(cString: strerror(errno)))"
            unlink(path)
            return (.success(holdUnkept(record, body, why: why)), .downloaded, r.bytes)
        }
        guard cache.keep(record, body: path, at: now()) else {
            let why = String(cString: strerror(errno))
            unlink(path)
            return (.success(holdUnkept(record, body, why: why)), .downloaded, r.bytes)
        }
        keepProblem.withLock { $0 = nil }
        return (.success(identity(record)), .downloaded, r.bytes)
    }

    /// A transfer that failed below HTTP: the public words for it, and libcurl's for the log.
    static func transportFailure(_ failure: TransferFailure, code: Int, _ detail: String, timeoutMs: Int) -> Result<
        SourceIdentity, ServiceFailure
    > {
        let message: String
        var kind = AspectError.Code.upstreamError
        switch failure {
        case .timedOut:
            kind = .upstreamTimeout
            message = "the origin did not answer in time (sources.timeoutMs \(timeoutMs) ms)"
        case .unresolved: message = "the origin's host name could not be resolved"
        case .refused: message = "the origin refused the connection or cannot be reached"
        case .cutShort: message = "the origin closed the connection before the whole source arrived"
        case .untrusted: message = "the origin's TLS certificate could not be verified"
        case .notHTTP: message = "the origin's answer is not valid HTTP"
        case .other: message = "fetching the source from the origin failed"
        }
        return .failure(ServiceFailure(AspectError(kind, message), stage: "fetch", detail: "curl \(code): \(detail)"))
    }
}
