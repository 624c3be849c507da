internal import CLinux
import Glibc
import HTTP
import Syscalls

/// What is left to write of one response: its head, then a body in memory or a range of a
/// file. The head buffer is kept from response to response.
struct ResponseOutput {
    /// What is left of a response's body to write.
    enum Body {
        case bytes([UInt8], sent: Int)
        /// Sent by sendfile(2) from an explicit offset, so one open file feeds many responses.
        case file(OpenFile, offset: Int64, remaining: Int64)
    }

    enum Progress: Equatable {
        /// All of it has gone.
        case done
        /// The socket takes no more now; some may have gone.
        case blocked
        /// The connection failed, or the file was shorter than promised.
        case failed
    }

    private(set) var head: [UInt8] = []
    private(set) var headSent = 0
    private(set) var body: Body?
    /// Bytes written, all responses together (the loop reads the difference a flush made).
    private(set) var sent: Int64 = 0

    var isEmpty: Bool { headSent == head.count && body == nil }

    /// Loads a response (a HEAD's without its body), dropping whatever was left.
    mutating func load(_ response: HTTPResponse, date: String, keepAlive: Bool, isHead: Bool) {
        clear()
        response.writeHead(into: &head, date: date, keepAlive: keepAlive)
        guard !isHead else { return }
        switch response.body {
        case .bytes(let b) where !b.isEmpty: body = .bytes(b, sent: 0)
        case .file(let file, let offset, let length) where length > 0:
            body = .file(file, offset: offset, remaining: length)
        default: break
        }
    }

    /// Forgets the response (its file reference goes with it).
    mutating func clear() {
        head.removeAll(keepingCapacity: true)
        headSent = 0
        body = nil
    }

    /// Writes as much as the socket `fd` takes.
    mutating func flush(to fd: Int32) -> Progress {
        while !isEmpty {
            let n: Int?
            do {
                if headSent == head.count, case .file(let file, let offset, let remaining) = body {
                    var off = off_t(offset)
                    n = try Syscall.nonBlocking("sendfile") {
                        clinux_sendfile(fd, file.fd, &off, Int(min(remaining, 1 << 30)))
                    }
                    if n == 0 { return .failed }
                } else {
                    n = try Syscall.nonBlocking("sendmsg") { writeBuffered(fd) }
                }
            } catch {
                return .failed
            }
            guard let n else { return .blocked }
            sent += Int64(n)
            consume(n)
        }
        return .done
    }

    /// One sendmsg(2) of what is left of the head and of a body in memory (a small body
    /// goes out with its head). When a file follows, the head goes with MSG_MORE, so the
    /// kernel sends it and the start of the file in one segment rather than a small one first.
    private func writeBuffered(_ fd: Int32) -> Int {
        head.withUnsafeBytes { head in
            let first = UnsafeRawBufferPointer(rebasing: head[headSent...])
            switch body {
            case .bytes(let b, let sent):
                return b.withUnsafeBytes { body in
                    Self.sendPieces(fd, first, UnsafeRawBufferPointer(rebasing: body[sent...]), more: false)
                }
            case .file: return Self.sendPieces(fd, first, UnsafeRawBufferPointer(start: nil, count: 0), more: true)
            case nil: return Self.sendPieces(fd, first, UnsafeRawBufferPointer(start: nil, count: 0), more: false)
            }
        }
    }

    /// sendmsg(2) of two pieces, either of which may be empty, with no array allocated.
    private static func sendPieces(_ fd: Int32, _ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, more: Bool)
        -> Int
    {
        func piece(_ p: UnsafeRawBufferPointer) -> iovec {
            iovec(iov_base: UnsafeMutableRawPointer(mutating: p.baseAddress), iov_len: p.count)
        }
        var pieces = a.isEmpty ? (piece(b), iovec()) : (piece(a), piece(b))
        let count = (a.isEmpty ? 0 : 1) + (b.isEmpty ? 0 : 1)
        let flags = Int32(MSG_NOSIGNAL) | (more ? Int32(MSG_MORE) : 0)
        return withUnsafeMutableBytes(of: &pieces) { raw in
            var m = msghdr()
            m.msg_iov = raw.baseAddress?.assumingMemoryBound(to: iovec.self)
            m.msg_iovlen = count
            return Int(sendmsg(fd, &m, flags))
        }
    }

    /// Marks `n` written bytes as sent: the head's first, then a body in memory's, or the file's.
    mutating func consume(_ n: Int) {
        var left = n
        let headLeft = head.count - headSent
        if headLeft > 0 {
            let take = min(left, headLeft)
            headSent += take
            left -= take
        }
        guard left > 0, let b = body else { return }
        switch b {
        case .bytes(let bytes, let sent):
            body = sent + left == bytes.count ? nil : .bytes(bytes, sent: sent + left)
        case .file(let file, let offset, let remaining):
            body =
                Int64(left) == remaining
                ? nil : .file(file, offset: offset + Int64(left), remaining: remaining - Int64(left))
        }
    }
}
