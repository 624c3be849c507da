/// The deadlines of a loop's connections, earliest first: a binary min-heap of
/// (time, connection). The loop owns one and sleeps in epoll_wait until its earliest
/// entry, so there is no polling tick.
///
/// Entries are never removed early. A connection whose deadline moves later keeps its
/// entry; when that comes up, the loop finds the deadline not yet due and schedules the
/// new one (`Connection.scheduled` says which entry is its own). A deadline that moves
/// earlier gets a new entry. So a keep-alive request costs no heap work at all in the
/// common case, and the heap holds a few entries per connection at most.
struct TimerQueue: Sendable {
    struct Entry: Sendable, Equatable {
        var at: UInt64
        var id: UInt64
    }

    private var heap: [Entry] = []

    var count: Int { heap.count }
    var earliest: UInt64? { heap.first?.at }

    mutating func schedule(_ at: UInt64, id: UInt64) {
        heap.append(Entry(at: at, id: id))
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[i].at < heap[parent].at else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    /// Removes and returns the earliest entry if it is due by `now`.
    mutating func popDue(_ now: UInt64) -> Entry? {
        guard let first = heap.first, first.at <= now else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1
                let r = l + 1
                var m = i
                if l < heap.count, heap[l].at < heap[m].at { m = l }
                if r < heap.count, heap[r].at < heap[m].at { m = r }
                if m == i { break }
                heap.swapAt(i, m)
                i = m
            }
        }
        return first
    }
}
