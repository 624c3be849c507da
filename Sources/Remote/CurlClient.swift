internal import CCurl
import Foundation
import Synchronization

/// The process's one libcurl client: `curl_global_init` once, one pool of easy handles
/// (each keeps its connections open for the next call), and the two calls the service
/// makes: a GET streamed into a file (a source download) and a whole request in memory
/// (the shared tier's S3 calls). Any thread may call; a handle is used by one at a time.
public final class CurlClient: Sendable {
    /// The one client the executable wires into the source store and the shared tier.
    public static let shared = CurlClient()

    /// libcurl's global set-up, once, before any thread uses it.
    private static let ready: Bool = ccurl_global_init() == 0

    /// A libcurl easy handle. `@unchecked Sendable`: one thread uses it at a time, taken
    /// from and given back to `handles` under that Mutex.
    struct Handle: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }

    private let handles = Mutex<[Handle]>([])

    public init() { _ = Self.ready }

    deinit {
        for h in handles.withLock({ $0 }) { ccurl_free(h.pointer) }
    }

    /// The bounds of one call.
    public struct Limits: Sendable {
        /// A body past this many bytes stops the transfer (`tooLarge`).
        public var maxBytes: Int64
        public var connectTimeoutMs: Int
        public var timeoutMs: Int
        /// A CA bundle to verify TLS with; empty: the system's.
        public var caFile: String

        public init(maxBytes: Int64, connectTimeoutMs: Int, timeoutMs: Int, caFile: String) {
            self.maxBytes = maxBytes
            self.connectTimeoutMs = connectTimeoutMs
            self.timeoutMs = timeoutMs
            self.caFile = caFile
        }
    }

    /// How one call ended: libcurl's code (`CURLE_OK` when an answer came), the status,
    /// and the response's fields the callers read.
    public struct Transfer: Sendable {
        public var code: Int
        public var status: Int
        public var tooLarge: Bool
        /// Body bytes received (a download's: written to the file).
        public var bytes: Int64
        /// Content-Length, -1 when absent.
        public var contentLength: Int64
        /// libcurl's words for a failure.
        public var error: String
        public var etag: String
        public var lastModified: String
        /// An absolute URL for a 3xx with Location.
        public var redirect: String
        public var contentType: String
        /// `Retry-After` and `X-Cache`, as sent (empty when absent).
        public var retryAfter: String
        public var xCache: String
        /// The body: a download's error answer (up to 4 KB), or a request's whole answer.
        public var body: [UInt8]

        public var ok: Bool { code == Int(CURLE_OK.rawValue) }
        /// What went wrong below HTTP, in libcurl's terms said once here; nil when an
        /// answer came.
        public var failure: TransferFailure? { ok ? nil : TransferFailure(code: code) }
        /// Writing the body to the file failed (not the size limit): the disk.
        public var writeFailed: Bool { code == Int(CURLE_WRITE_ERROR.rawValue) && !tooLarge }

        init(_ r: inout ccurl_result, body: [UInt8]) {
            code = Int(r.code)
            status = Int(r.status)
            tooLarge = r.too_large != 0
            bytes = r.bytes
            contentLength = r.content_length
            error = Self.text(&r.error)
            etag = Self.text(&r.etag)
            lastModified = Self.text(&r.last_modified)
            redirect = Self.text(&r.redirect)
            contentType = Self.text(&r.content_type)
            retryAfter = Self.text(&r.retry_after)
            xCache = Self.text(&r.x_cache)
            self.body = body
        }

        /// A transfer that never started.
        static func failed(_ why: String) -> Transfer {
            var r = ccurl_result()
            r.code = Int32(CURLE_FAILED_INIT.rawValue)
            var t = Transfer(&r, body: [])
            t.error = why
            return t
        }

        /// A C string in a fixed-size field of `ccurl_result`.
        static func text<T>(_ field: inout T) -> String {
            withUnsafeBytes(of: &field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
    }

    /// A handle from the pool (or a new one) for `body`, given back after.
    private func withHandle(_ body: (UnsafeMutableRawPointer) -> Transfer) -> Transfer {
        guard let handle = handles.withLock({ $0.popLast() }) ?? ccurl_new().map(Handle.init) else {
            return .failed("curl_easy_init failed")
        }
        defer { handles.withLock { $0.append(handle) } }
        return body(handle.pointer)
    }

    /// `headers` ("Name: value") as C strings for the length of `body`.
    private static func withCStrings<R>(_ headers: [String], _ body: (inout [UnsafePointer<CChar>?]) -> R) -> R {
        let cStrings = headers.map { strdup($0) }
        defer { for c in cStrings { free(c) } }
        var pointers: [UnsafePointer<CChar>?] = cStrings.map { UnsafePointer($0) }
        return body(&pointers)
    }

    /// GET `url`: a 2xx body streamed into `fd` as it arrives (up to `limits.maxBytes`);
    /// another status's body (up to 4 KB) in `body`. Redirects are not followed: the
    /// caller decides.
    public func download(_ url: String, headers: [String], into fd: Int32, limits: Limits) -> Transfer {
        withHandle { handle in
            var r = ccurl_result()
            var errorBody = [CChar](repeating: 0, count: 4096)
            let size = Int32(errorBody.count)
            Self.withCStrings(headers) { pointers in
                errorBody.withUnsafeMutableBufferPointer { body in
                    ccurl_get(
                        handle, url, pointers, Int32(pointers.count), fd, limits.maxBytes, limits.connectTimeoutMs,
                        limits.timeoutMs, limits.caFile.isEmpty ? nil : limits.caFile, body.baseAddress, size, &r)
                }
            }
            let text = errorBody.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            return Transfer(&r, body: text)
        }
    }

    /// Any `method` with `body` (nil: none) from memory; the answer whole (any status, up
    /// to `limits.maxBytes`). Redirects are not followed.
    public func request(_ method: String, _ url: String, headers: [String], body: [UInt8]?, limits: Limits)
        -> Transfer
    {
        withHandle { handle in
            var r = ccurl_result()
            var response: UnsafeMutablePointer<UInt8>?
            var length = 0
            Self.withCStrings(headers) { pointers in
                func send(_ data: UnsafeRawPointer?, _ count: Int) {
                    ccurl_request(
                        handle, method, url, pointers, Int32(pointers.count), data, count, limits.maxBytes,
                        limits.connectTimeoutMs, limits.timeoutMs, limits.caFile.isEmpty ? nil : limits.caFile,
                        &response, &length, &r)
                }
                if let body {
                    body.withUnsafeBytes { send($0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), $0.count) }
                } else {
                    send(nil, 0)
                }
            }
            defer { free(response) }
            let bytes = response.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? []
            return Transfer(&r, body: bytes)
        }
    }
}

/// How a transfer failed below HTTP: libcurl's codes, grouped as a caller words them.
public enum TransferFailure: Equatable, Sendable {
    /// Past the transfer's time limit.
    case timedOut
    /// The host name did not resolve.
    case unresolved
    /// The connection was refused or the host cannot be reached.
    case refused
    /// The connection closed before the whole answer came.
    case cutShort
    /// The peer's TLS certificate was not trusted, or the handshake failed.
    case untrusted
    /// The answer is not HTTP.
    case notHTTP
    /// Anything else (the disk, a transfer that never started, …).
    case other

    init(code: Int) {
        switch UInt32(truncatingIfNeeded: code) {
        case CURLE_OPERATION_TIMEDOUT.rawValue: self = .timedOut
        case CURLE_COULDNT_RESOLVE_HOST.rawValue: self = .unresolved
        case CURLE_COULDNT_CONNECT.rawValue: self = .refused
        case CURLE_PARTIAL_FILE.rawValue, CURLE_RECV_ERROR.rawValue, CURLE_GOT_NOTHING.rawValue: self = .cutShort
        case CURLE_PEER_FAILED_VERIFICATION.rawValue, CURLE_SSL_CONNECT_ERROR.rawValue: self = .untrusted
        case CURLE_WEIRD_SERVER_REPLY.rawValue: self = .notHTTP
        default: self = .other
        }
    }
}
