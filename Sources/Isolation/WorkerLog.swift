import Foundation
import Glibc
import Synchronization

/// What a worker writes on its stderr (its descriptor 2, a pipe): read on a thread of its
/// own until the worker ends, and logged a line at a time with the worker's pid, at most
/// `linesPerSecond` a second and `longestLine` bytes a line, so a worker cannot flood the
/// service's log (SPEC: Isolation). A line any worker wrote in the last minute is not
/// written again (every worker warns the same of the same kind of file).
enum WorkerLog {
    static let linesPerSecond = 20
    static let longestLine = 1024
    static let recent = Mutex<[String: Int]>([:])

    /// Whether `line` is news: not written by any worker in the last 60 s.
    static func isNew(_ line: String, at now: Int) -> Bool {
        recent.withLock { seen in
            if seen.count > 1000 { seen = seen.filter { now - $0.value < 60 } }
            if let at = seen[line], now - at < 60 { return false }
            seen[line] = now
            return true
        }
    }

    static func follow(_ fd: Int32, pid: pid_t, log: @escaping @Sendable (String) -> Void) {
        let reader = Thread {
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            var (second, lines, dropped) = (Int(time(nil)), 0, 0)
            func emit(_ line: ArraySlice<UInt8>) {
                let now = Int(time(nil))
                if now != second {
                    if dropped > 0 { log("render worker \(pid): \(dropped) more lines not logged") }
                    (second, lines, dropped) = (now, 0, 0)
                }
                guard lines < linesPerSecond else {
                    dropped += 1
                    return
                }
                lines += 1
                let text = String(decoding: line.prefix(longestLine), as: UTF8.self)
                if isNew(text, at: now) { log("render worker \(pid): " + text) }
            }
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { break }
                pending += buffer[..<n]
                while let end = pending.firstIndex(of: 10) {
                    emit(pending[..<end])
                    pending.removeSubrange(...end)
                }
                if pending.count > longestLine {
                    emit(pending[...])
                    pending.removeAll()
                }
            }
            if !pending.isEmpty { emit(pending[...]) }
            if dropped > 0 { log("render worker \(pid): \(dropped) more lines not logged") }
            close(fd)
        }
        reader.name = "aspect-worker-log"
        reader.start()
    }
}
