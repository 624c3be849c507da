/// An invalid configuration: names the key, where the value came from, and the problem.
public struct ConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The key (`server.port`), or the flag or file concerned when there is no key.
    public let key: String
    public let message: String

    public init(key: String, message: String) {
        self.key = key
        self.message = message
    }

    public var description: String { "\(key): \(message)" }
}
