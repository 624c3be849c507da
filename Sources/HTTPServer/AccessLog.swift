import Glibc
import HTTP
import Syscalls

/// One line per request, text or JSON, buffered and written to stdout once per loop turn.
struct AccessLog {
    let format: ServerConfiguration.LogFormat
    let enabled: Bool
    private var buffer: [UInt8] = []

    init(format: ServerConfiguration.LogFormat, enabled: Bool) {
        self.format = format
        self.enabled = enabled
    }

    mutating func record(method: String, target: String, status: Int, bytes: Int64, nanoseconds: UInt64, note: String?)
    {
        guard enabled else { return }
        let ms = Double(nanoseconds) / 1e6
        let msText = "\(Int(ms))." + "\(Int(ms * 10) % 10)"
        let line: String
        switch format {
        case .text:
            line =
                "\(AccessLog.timestamp()) \(method) \(target) \(status) \(bytes) \(msText)ms"
                + (note.map { " \($0)" } ?? "")
        case .json:
            line =
                #"{"time":"\#(AccessLog.timestamp())","method":\#(JSON.string(method)),"target":\#(JSON.string(target)),"#
                + #""status":\#(status),"bytes":\#(bytes),"ms":\#(msText)"#
                + (note.map { #","note":\#(JSON.string($0))"# } ?? "") + "}"
        }
        buffer += Array(line.utf8)
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count > 64 * 1024 { flush() }
    }

    mutating func flush() {
        guard !buffer.isEmpty else { return }
        // A log that cannot be written (a closed stdout) must not stop the server.
        _ = buffer.withUnsafeBytes { try? Syscall.writeAll(1, $0) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// `2026-12-02T15:04:05Z`.
    static func timestamp() -> String {
        var t = time(nil)
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return
            "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
