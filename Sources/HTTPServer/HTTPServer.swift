internal import CLinux
import Foundation
import Glibc
import HTTP
import Synchronization
import Syscalls

/// An HTTP/1.1 server on non-blocking sockets and epoll: `eventLoops` threads, each owning
/// the connections it accepted, and a bounded pool of workers for the handler's CPU-bound
/// work.
///
/// `@unchecked Sendable`: after `init` its stored properties never change; the loops and
/// the pool it holds are themselves thread-safe where they are shared.
public final class HTTPServer: @unchecked Sendable {
    public let configuration: ServerConfiguration
    public let stats = ServerStats()
    /// The port actually listened on (the configured one, or the kernel's pick for 0).
    public let port: Int
    let handler: any HTTPHandler
    let pool: WorkerPool
    private var loops: [EventLoop] = []
    private let sinks: [LoopSink]
    private let signalFD: Int32
    private let listenFD: Int32

    /// Binds and listens; `run()` then serves.
    public init(configuration: ServerConfiguration, handler: any HTTPHandler) throws(SystemError) {
        self.configuration = configuration
        self.handler = handler
        signalFD = try Syscall.retrying("eventfd") { clinux_eventfd() }
        let count = max(1, configuration.eventLoops)
        // One listening socket, in every loop's epoll with EPOLLEXCLUSIVE: the kernel wakes
        // one loop per connection. (SO_REUSEPORT would spread them too, but would also let
        // a second process bind the same port without an error.)
        let (listenFD, port) = try Listener.open(host: configuration.host, port: configuration.port)
        self.listenFD = listenFD
        self.port = port
        let fds = Array(repeating: listenFD, count: count)
        var made: [LoopSink] = []
        for _ in fds { made.append(LoopSink(wakeFD: try Syscall.retrying("eventfd") { clinux_eventfd() })) }
        let sinks = made
        self.sinks = sinks
        pool = WorkerPool(workers: configuration.workers, queueDepth: configuration.queueDepth) { ticket, response in
            let sink = sinks[ticket.loop]
            sink.completions.list.withLock { $0.append((ticket.connection, response)) }
            EventLoop.poke(sink.wakeFD)
        }
        stats.pool.withLock { $0 = pool }
        for (i, fd) in fds.enumerated() {
            loops.append(
                try EventLoop(index: i, server: self, sink: sinks[i], listenFD: fd, signalFD: i == 0 ? signalFD : nil))
        }
    }

    deinit {
        Glibc.close(listenFD)
        Glibc.close(signalFD)
        for s in sinks { Glibc.close(s.wakeFD) }
    }

    /// SIGTERM and SIGINT start a graceful shutdown; SIGPIPE is ignored. Process-wide:
    /// call it for the one server of an executable.
    public func installSignalHandlers() {
        _ = clinux_install_shutdown_signals(signalFD)
    }

    /// Starts a graceful shutdown from any thread, as SIGTERM does: every loop stops
    /// accepting, finishes what is in flight within the drain timeout, and ends.
    public func shutdown() {
        guard !stats.draining.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // Shut down, not closed: accept(2) fails and new connections are refused at once,
        // while the descriptor stays valid for the loops until the server is gone.
        _ = Glibc.shutdown(listenFD, Int32(SHUT_RDWR))
        for loop in loops { loop.requestShutdown() }
    }

    /// Serves until a shutdown has drained; returns then.
    public func run() {
        let done = DispatchGroup()
        for loop in loops.dropFirst() {
            done.enter()
            let t = Thread {
                loop.run()
                done.leave()
            }
            t.name = "aspect-loop-\(loop.index)"
            t.start()
        }
        loops[0].run()
        done.wait()
        pool.stop()
    }
}

/// Responses finished by workers, waiting for their event loop.
final class Completions: Sendable {
    let list = Mutex<[(UInt64, HTTPResponse)]>([])
}

/// Where workers hand a loop its answers: the list, and the eventfd that wakes the loop.
struct LoopSink: Sendable {
    let wakeFD: Int32
    let completions = Completions()
}
