import Foundation
import Synchronization

/// Identical work in flight is done once: the first caller for a key runs it, the others
/// wait and get its result.
public final class Coalescer<Value: Sendable>: Sendable {
    /// One piece of work in flight. `@unchecked Sendable`: `value` is written once under
    /// `done`'s lock before the broadcast, and read under it after.
    private final class Flight: @unchecked Sendable {
        let done = NSCondition()
        var value: Value?
    }

    private let flights = Mutex<[String: Flight]>([:])

    public init() {}

    /// The work's value, and whether it came from another caller's run.
    public func run(_ key: String, _ work: () -> Value) -> (Value, coalesced: Bool) {
        let (flight, leader) = flights.withLock { map -> (Flight, Bool) in
            if let f = map[key] { return (f, false) }
            let f = Flight()
            map[key] = f
            return (f, true)
        }
        if !leader {
            flight.done.lock()
            defer { flight.done.unlock() }
            while flight.value == nil { flight.done.wait() }
            if let v = flight.value { return (v, true) }
        }
        let value = work()
        flight.done.lock()
        flight.value = value
        flight.done.broadcast()
        flight.done.unlock()
        flights.withLock { _ = $0.removeValue(forKey: key) }
        return (value, false)
    }
}
