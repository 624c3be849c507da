import CLinux
import CSandbox
import Core
import Foundation
import Stores
import Syscalls

/// What the service sends a render worker, each a message on their socket: the first of a
/// job with the source's descriptor beside it (SPEC: Isolation).
enum ToWorker: Codable {
    case header(SourceReading)
    case describe(SourceReading)
    case render(SourceReading, wantFacts: Bool)
    /// The planner's answer to `needOrder`.
    case order(RenderOrder)
    case orderRefused(AspectError)
}

/// What a worker answers. Each answer goes in a memfd, sent beside a message: its JSON,
/// then the bytes of a result (or of `/info`'s preview), so no answer is too big for a
/// socket message.
enum FromWorker: Codable {
    case header(SourceDescription)
    /// `describe`'s facts; their preview pixels are the blob.
    case facts(SourceFacts)
    /// The header is read: what should be made of it? (The service plans; the worker renders.)
    case needOrder(SourceDescription)
    /// The result's bytes are the blob; a preview's pixels follow them when `facts` has one.
    case rendered(format: ImageFormat, quality: Int?, facts: SourceFacts?, resultBytes: Int)
    case failed(WireFailure)
}

/// A `ServiceFailure` across the wire.
struct WireFailure: Codable {
    var error: AspectError
    var stage: String
    var detail: String

    init(_ f: ServiceFailure) { (error, stage, detail) = (f.error, f.stage, f.detail) }
    var failure: ServiceFailure { ServiceFailure(error, stage: stage, detail: detail) }
}

/// The messages of the service–worker socket.
enum Wire {
    /// The largest request message: a render's order is a few hundred bytes (a message
    /// larger than this is cut, and refused as truncated).
    static let maxMessage = 64 << 10
    /// The largest answer a worker may give: a result (at most 4096 × 4096 pixels, encoded)
    /// and a preview are far below it.
    static let maxAnswer: Int64 = 1 << 30

    /// A worker's first word, once it is locked down and ready for jobs.
    static let ready: UInt8 = UInt8(ascii: "R")

    enum Problem: Error {
        /// The other end closed, or the socket failed: for a worker, its death.
        case closed
        case malformed(String)
    }

    /// A request, and the source's descriptor for the first of a job.
    static func send(_ message: ToWorker, on socket: Int32, fd: Int32 = -1) throws(Problem) {
        guard let json = try? JSONEncoder().encode(message) else { throw .malformed("unencodable request") }
        let sent = json.withUnsafeBytes { csandbox_send(socket, $0.baseAddress, $0.count, fd) }
        guard sent == json.count else { throw .closed }
    }

    static func receiveRequest(on socket: Int32) throws(Problem) -> (ToWorker, Int32) {
        var buffer = [UInt8](repeating: 0, count: maxMessage)
        var fd: Int32 = -1
        let n = buffer.withUnsafeMutableBytes { csandbox_recv(socket, $0.baseAddress, $0.count, &fd) }
        guard n > 0 else {
            if fd >= 0 { close(fd) }
            throw .closed
        }
        guard let message = try? JSONDecoder().decode(ToWorker.self, from: Data(buffer[..<n])) else {
            if fd >= 0 { close(fd) }
            throw .malformed("a request that is not one")
        }
        return (message, fd)
    }

    /// An answer and its blob, in a memfd sent beside a one-byte message.
    static func send(_ message: FromWorker, blob: [UInt8] = [], on socket: Int32) throws(Problem) {
        guard let json = try? JSONEncoder().encode(message) else { throw .malformed("unencodable answer") }
        let fd = clinux_memfd("aspect-answer")
        guard fd >= 0 else { throw .closed }
        defer { close(fd) }
        var length = UInt64(json.count).littleEndian
        let head = withUnsafeBytes(of: &length) { Array($0) }
        let whole = head + Array(json) + blob
        guard whole.withUnsafeBytes({ (try? Syscall.writeAll(fd, $0)) != nil }) else { throw .closed }
        let one: [UInt8] = [1]
        let sent = one.withUnsafeBytes { csandbox_send(socket, $0.baseAddress, 1, fd) }
        guard sent == 1 else { throw .closed }
    }

    static func receiveAnswer(on socket: Int32) throws(Problem) -> (FromWorker, [UInt8]) {
        var byte: UInt8 = 0
        var fd: Int32 = -1
        let n = csandbox_recv(socket, &byte, 1, &fd)
        guard n > 0, fd >= 0 else {
            if fd >= 0 { close(fd) }
            throw .closed
        }
        let file = OpenFile(owning: fd)
        // A worker is not trusted: an answer is read only up to a bound.
        guard let size = file.regularFileSize, size >= 8, size <= maxAnswer, let bytes = file.read(count: Int(size))
        else { throw .malformed("an answer without its head, or too large") }
        let length = bytes[0..<8].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * $1.offset) }
        guard length <= UInt64(bytes.count - 8), case let length = Int(length),
            let message = try? JSONDecoder().decode(FromWorker.self, from: Data(bytes[8..<(8 + length)]))
        else { throw .malformed("an answer that is not one") }
        return (message, Array(bytes[(8 + length)...]))
    }
}
