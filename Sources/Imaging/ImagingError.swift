import Core

/// A failure of the imaging pipeline: the public error (code and message a client may
/// see) and, for the log only, what libvips said.
public struct ImagingError: Error, Sendable, CustomStringConvertible {
    /// Where in the pipeline it failed; the code follows from the stage, since libvips'
    /// error text is process-wide and only good for the log.
    public enum Stage: String, Sendable {
        case start, open, header, limits, decode, process, encode, timeout
    }

    public let stage: Stage
    public let error: AspectError
    /// libvips' error text (or the system's), for the log.
    public let detail: String

    public init(_ stage: Stage, _ error: AspectError, detail: String = "") {
        self.stage = stage
        self.error = error
        self.detail = detail
    }

    public var description: String {
        detail.isEmpty ? "\(stage.rawValue): \(error)" : "\(stage.rawValue): \(error) [\(detail)]"
    }
}
