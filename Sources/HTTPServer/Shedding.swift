/// Whom to close when the connection table is full and a client connects (issue 44):
/// rather than refuse the newcomer, the server gives up the connection it can best spare,
/// as nginx reuses its idle keep-alive connections, and further.
enum Shedding {
    /// Why a connection was given up, for `aspect_connections_shed_total{reason}`.
    enum Reason: String, Sendable, CaseIterable {
        /// Kept alive with nothing in flight.
        case idle
        /// Its answer is all with the kernel; it only waits on the client (lingering).
        case answered
        /// Still sending its request head.
        case slowHead = "slow_head"
        /// Reading its answer below `server.minSendBytesPerSecond`.
        case slowRead = "slow_read"

        /// Its place in `ServerStats.shed`.
        var index: Int { Self.allCases.firstIndex(of: self) ?? 0 }
    }

    /// A connection that could be given up: its class (lower goes first), its rate in
    /// bytes a second (lower goes first within a class), and since when it has been so
    /// (older goes first among equals).
    struct Candidate: Sendable, Equatable {
        var id: UInt64
        var reason: Reason
        var rate: Double
        var since: UInt64

        var rank: Int {
            switch reason {
            case .idle: 0
            case .answered: 1
            case .slowHead, .slowRead: 2
            }
        }
    }

    /// The one to close: idle ones oldest first, then answered ones oldest first, then the
    /// slowest of those reading a head or draining an answer (oldest among equals). Nil
    /// when every connection is mid-render or mid-transfer at a healthy rate.
    static func choose(_ candidates: [Candidate]) -> Candidate? {
        candidates.min { a, b in
            if a.rank != b.rank { return a.rank < b.rank }
            if a.rank == 2, a.rate != b.rate { return a.rate < b.rate }
            // Accepted in one turn of the loop, they share a time: the first accepted is older.
            return a.since != b.since ? a.since < b.since : a.id < b.id
        }
    }
}
