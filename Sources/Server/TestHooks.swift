import Core
import Foundation
import Glibc
import Isolation
import Stores
import Syscalls

/// What the tests do inside a real locked-down worker during a real job, as code injected
/// by a decoder's exploit would (issue 51). Compiled into debug builds only, and active only
/// when the service that started the worker had `TESTHOOK_ASPECT_ATTACKS=1`: a release
/// build has none of it. A source whose first bytes hold `ASPECT-ATTACK NAME [ARG]` makes the
/// worker try NAME and answer what happened (a 415 whose message says it), unless the
/// sandbox kills it for trying.
enum TestHooks {
    static func attack(_ file: OpenFile) -> ServiceFailure? {
        #if DEBUG
            guard ProcessInfo.processInfo.environment["TESTHOOK_ASPECT_ATTACKS"] == "1" else { return nil }
            var head = [UInt8](repeating: 0, count: 512)
            let n = head.withUnsafeMutableBytes { pread(file.fd, $0.baseAddress, $0.count, 0) }
            // Anywhere in the first bytes: a source fetched from an origin must look like an
            // image to the service first.
            let marker = Array("ASPECT-ATTACK ".utf8)
            guard n > marker.count,
                let at = (0...(n - marker.count)).first(where: { head[$0..<($0 + marker.count)].elementsEqual(marker) })
            else { return nil }
            let words = String(decoding: head[(at + marker.count)..<n], as: UTF8.self).split(
                whereSeparator: \.isWhitespace
            ).map(String.init)
            guard let name = words.first else { return nil }
            let outcome = run(name, words.count > 1 ? words[1] : "", file: file)
            return ServiceFailure(AspectError(.unsupportedSource, "attack \(name): \(outcome)"), stage: "worker")
        #else
            return nil
        #endif
    }

    #if DEBUG
        /// Tries one thing a taken-over worker would; what happened, in words (`denied: …`
        /// or `SUCCEEDED: …`). A call the filter forbids ends the process instead.
        static func run(_ name: String, _ argument: String, file: OpenFile) -> String {
            let service = getppid()
            // The first of a comma-separated list of pids that is not this worker's.
            func other(_ list: String) -> pid_t? {
                list.split(separator: ",").compactMap { pid_t($0) }.first { $0 != getpid() }
            }
            func denied(_ r: Int32) -> String {
                r >= 0 ? "SUCCEEDED (\(r))" : "denied: \(String(cString: strerror(errno)))"
            }
            func open(_ path: String, _ flags: Int32) -> String {
                let fd = Glibc.open(path, flags | O_CLOEXEC, 0o600)
                defer { if fd >= 0 { close(fd) } }
                return denied(fd)
            }
            switch name {
            // A decoder's crash: what a poisoned source does to every worker that reads it.
            case "crash": return denied(raise(SIGSEGV))
            case "environ": return open("/proc/\(service)/environ", O_RDONLY)
            case "mem": return open("/proc/\(service)/mem", O_RDWR)
            case "maps": return open("/proc/\(service)/maps", O_RDONLY)
            case "fd": return open("/proc/\(service)/fd", O_RDONLY | O_DIRECTORY)
            case "read": return open(argument, O_RDONLY)
            case "create": return open(argument, O_WRONLY | O_CREAT | O_EXCL)
            case "signal": return denied(kill(other(argument) ?? service, SIGTERM))
            case "queue": return denied(Sandbox.Probe.sigqueue(other(argument) ?? service))
            case "renice": return denied(setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(service), 19))
            case "affinity": return denied(Sandbox.Probe.setaffinity(service))
            case "setown":
                // A pipe of its own whose events the kernel would signal to the service.
                var ends: [Int32] = [-1, -1]
                guard Sandbox.Probe.pipe(&ends) == 0 else { return "no pipe" }
                defer { for e in ends { close(e) } }
                return denied(fcntl(ends[0], F_SETOWN, service))
            case "userfaultfd": return denied(Sandbox.Probe.userfaultfd())
            case "socket": return denied(socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0))
            case "connect":
                // Every descriptor held, as if it were a socket left open by the service.
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = in_port_t(80).bigEndian
                address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
                let results = (Int32(0)..<64).compactMap { fd -> String? in
                    guard fcntl(fd, F_GETFD) >= 0 else { return nil }
                    let r = withUnsafePointer(to: &address) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                        }
                    }
                    return "\(fd): \(denied(r))"
                }
                return results.joined(separator: ", ")
            case "descriptors":
                // Each one open, with its kind: c (character device), p (pipe), s (socket), f (file).
                let held = (Int32(0)..<1024).compactMap { fd -> String? in
                    var st = stat()
                    guard fstat(fd, &st) == 0 else { return nil }
                    let kind =
                        switch st.st_mode & S_IFMT {
                        case S_IFCHR: "c"
                        case S_IFIFO: "p"
                        case S_IFSOCK: "s"
                        case S_IFREG: fd == file.fd ? "job" : "f"
                        default: "?"
                        }
                    return "\(fd)\(kind)"
                }
                return "held " + held.joined(separator: " ")
            default: return "unknown attack"
            }
        }
    #endif
}
