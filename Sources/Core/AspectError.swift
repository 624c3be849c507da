/// The one error type of Aspect: a closed set of codes, each with a message a person
/// can act on. Core knows no HTTP; the server maps each code to a status in one switch.
/// What the HTTP layer answers on its own (408, 414, 431, a full queue) is its `HTTPError`.
public struct AspectError: Error, Equatable, Sendable, Codable, CustomStringConvertible {
    /// What went wrong, as a stable machine-readable code.
    public enum Code: String, Sendable, CaseIterable, Codable {
        /// A parameter is missing, unknown, repeated, malformed or out of range.
        case badParam = "bad_param"
        /// The signature is missing or does not match.
        case badSignature = "bad_signature"
        /// `src` leaves the image root, or names something that may not be served.
        case forbiddenPath = "forbidden_path"
        /// No such source, or no such route.
        case notFound = "not_found"
        /// An admin route without the right `Authorization: Bearer` token.
        case unauthorized
        /// A signed URL past its `expires` time (a dialect's option).
        case gone
        /// A method other than GET or HEAD.
        case methodNotAllowed = "method_not_allowed"
        /// The source file or its pixel count is over the configured limit.
        case sourceTooLarge = "source_too_large"
        /// The source is not an image that can be decoded, or is corrupt.
        case unsupportedSource = "unsupported_source"
        /// The source made a render worker die (SPEC: Isolation), or did so lately.
        case decodeCrashed = "decode_crashed"
        /// A render worker answered what no honest one would (a size past the plan, an
        /// unsealed or oversized result, nonsense): it is replaced (SPEC: Isolation).
        case workerProtocol = "worker_protocol"
        /// A render worker was killed from outside (not by the service, not for the
        /// source) while it held the request, and so was the one tried after it.
        case workerLost = "worker_lost"
        /// Processing took longer than the configured limit.
        case processingTimeout = "processing_timeout"
        /// The origin (HTTP or S3) failed: refused, reset, a 5xx, a 4xx other than 404/410.
        case upstreamError = "upstream_error"
        /// The origin took longer than `sources.timeoutMs`.
        case upstreamTimeout = "upstream_timeout"
        /// Anything unforeseen.
        case internalError = "internal"
    }

    public let code: Code
    /// The public message: says what to fix, never more than the client should see.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }

    public static func badParam(_ message: String) -> AspectError { AspectError(.badParam, message) }
}
