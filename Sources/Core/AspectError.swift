/// The one error type of Aspect: a closed set of codes, each with a message a person
/// can act on. Core knows no HTTP; the server maps each code to a status in one switch.
public struct AspectError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable machine-readable code.
    public enum Code: String, Sendable, CaseIterable {
        /// A parameter is missing, unknown, repeated, malformed or out of range.
        case badParam = "bad_param"
        /// The signature is missing or does not match.
        case badSignature = "bad_signature"
        /// `src` leaves the image root, or names something that may not be served.
        case forbiddenPath = "forbidden_path"
        /// No such source, or no such route.
        case notFound = "not_found"
        /// A method other than GET or HEAD.
        case methodNotAllowed = "method_not_allowed"
        /// The client was too slow sending its request.
        case requestTimeout = "request_timeout"
        /// The source file or its pixel count is over the configured limit.
        case sourceTooLarge = "source_too_large"
        /// The request target is too long.
        case uriTooLong = "uri_too_long"
        /// The request's headers are too large or too many.
        case headersTooLarge = "headers_too_large"
        /// The source is not an image that can be decoded, or is corrupt.
        case unsupportedSource = "unsupported_source"
        /// The processing queue is full.
        case queueFull = "queue_full"
        /// Processing took longer than the configured limit.
        case processingTimeout = "processing_timeout"
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

    static func badParam(_ message: String) -> AspectError { AspectError(.badParam, message) }
}
