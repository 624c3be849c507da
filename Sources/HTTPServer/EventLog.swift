import Glibc
import HTTP
import Synchronization
import Syscalls

/// The service's event log on standard error: start-up, warnings, errors, and what
/// libraries report through it, one line each, as text or as JSON objects (`log.format`),
/// filtered by `log.level`. The access log (stdout) is separate.
public enum EventLog {
    public enum Level: Int, Sendable, Comparable {
        case debug, info, warning, error

        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }

        var name: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }

    struct Settings {
        var format = ServerConfiguration.LogFormat.text
        var level = Level.info
    }

    private static let settings = Mutex(Settings())

    /// Sets the format and the least severe level written. Call once, at start.
    public static func configure(format: ServerConfiguration.LogFormat, level: Level) {
        settings.withLock { $0 = Settings(format: format, level: level) }
    }

    /// Writes one line, unless `level` is below the configured one. Several lines in
    /// `message` are joined, so one event stays one line.
    /// `always`: written whatever the level (start and stop, which tools wait for).
    public static func write(_ level: Level, _ message: String, source: String = "aspect", always: Bool = false) {
        let s = settings.withLock { $0 }
        guard always || level >= s.level else { return }
        let text = message.split(whereSeparator: \.isNewline).joined(separator: " ")
        let line: String
        switch s.format {
        case .text:
            line = level >= .warning ? "\(source): \(level.name): \(text)\n" : "\(source): \(text)\n"
        case .json:
            line =
                #"{"time":"\#(AccessLog.timestamp())","level":"\#(level.name)","source":\#(JSON.string(source)),"#
                + #""message":\#(JSON.string(text))}"# + "\n"
        }
        _ = Array(line.utf8).withUnsafeBytes { try? Syscall.writeAll(2, $0) }
    }
}
