internal import CLinux
internal import CSandbox
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
    /// `chosen`: `format=best`'s choice, whose format is `format`.
    case rendered(format: ImageFormat, quality: Int?, facts: SourceFacts?, resultBytes: Int, chosen: BestChoice?)
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
    /// What an answer holds besides its result: the JSON of its facts and a preview's
    /// pixels (at most 100 × 100 RGBA).
    static let answerOverhead: Int64 = 1 << 20

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

    /// A message and its blob in a sealed memfd, sent beside a one-byte message: a
    /// worker's answer, or the service's settings for a new worker. The head is the
    /// JSON's length (8 bytes, little-endian), then the JSON, then the blob.
    static func send(_ message: some Encodable, blob: [UInt8] = [], on socket: Int32) throws(Problem) {
        guard let json = try? JSONEncoder().encode(message) else { throw .malformed("unencodable answer") }
        try sendRaw(json: Array(json), blob: blob, on: socket)
    }

    /// `send(_:blob:on:)` of JSON already encoded.
    static func sendRaw(json: [UInt8], blob: [UInt8], on socket: Int32) throws(Problem) {
        let fd = csandbox_sealable_memfd("aspect-answer")
        guard fd >= 0 else { throw .closed }
        defer { close(fd) }
        var length = UInt64(json.count).littleEndian
        let head = withUnsafeBytes(of: &length) { Array($0) }
        // Piece by piece: joined first, a result would be copied once more.
        for piece in [head, json, blob] where !piece.isEmpty {
            guard piece.withUnsafeBytes({ (try? Syscall.writeAll(fd, $0)) != nil }) else { throw .closed }
        }
        guard csandbox_seal(fd) == 0 else { throw .closed }
        let one: [UInt8] = [1]
        let sent = one.withUnsafeBytes { csandbox_send(socket, $0.baseAddress, 1, fd) }
        guard sent == 1 else { throw .closed }
    }

    /// A worker's answer; see `receive(_:on:limit:)`.
    static func receiveAnswer(on socket: Int32, limit: Int64) throws(Problem) -> (FromWorker, [UInt8]) {
        try receive(FromWorker.self, on: socket, limit: limit)
    }

    /// A message sent by `send(_:blob:on:)`, distrusted (SPEC: Isolation): exactly one
    /// descriptor, a memfd sealed against writes, shrinking and growth (so what is checked
    /// is what is used), at most `limit` bytes, mapped rather than read; its head's length
    /// within it, its JSON a message of the type. Anything else is `malformed`.
    static func receive<T: Decodable>(_ type: T.Type, on socket: Int32, limit: Int64) throws(Problem) -> (T, [UInt8]) {
        var byte: UInt8 = 0
        var fd: Int32 = -1
        let n = csandbox_recv(socket, &byte, 1, &fd)
        guard n > 0 else {
            if fd >= 0 { close(fd) }
            if n < 0, errno == EPROTO || errno == EMSGSIZE { throw .malformed("a message with more than it may carry") }
            throw .closed
        }
        guard fd >= 0 else { throw .malformed("a message without its memfd") }
        let file = OpenFile(owning: fd)
        guard csandbox_is_sealed(file.fd) == 1 else { throw .malformed("an answer in a memfd that is not sealed") }
        guard let size = file.regularFileSize, size >= 8, size <= limit else {
            throw .malformed("an answer of \(file.regularFileSize ?? -1) bytes, over \(limit) or without its head")
        }
        guard let mapped = mmap(nil, Int(size), PROT_READ, MAP_SHARED, file.fd, 0),
            mapped != UnsafeMutableRawPointer(bitPattern: -1)
        else {
            throw .malformed("an answer that cannot be mapped")
        }
        defer { munmap(mapped, Int(size)) }
        let bytes = UnsafeRawBufferPointer(start: mapped, count: Int(size))
        let length = (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[$1]) << (8 * UInt64($1)) }
        guard length <= UInt64(bytes.count - 8), case let length = Int(length),
            let message = try? JSONDecoder().decode(T.self, from: Data(bytes[8..<(8 + length)]))
        else { throw .malformed("an answer that is not one") }
        return (message, Array(bytes[(8 + length)...]))
    }
}
