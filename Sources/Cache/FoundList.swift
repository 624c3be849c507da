import Glibc

/// The fill's listing of a folder (a record per file found), in memory mapped for it alone
/// and unmapped when done: a million records are 56 MB, and had malloc held them, the
/// freed space would stay in its arena, resident, as large as the index itself (glibc
/// keeps a freed top of a thread's arena below its raised trim threshold). Grows by
/// doubling into a new mapping; sorted in place by a heap sort, which needs no memory of its own.
struct FoundList: ~Copyable {
    private var base: UnsafeMutableRawPointer?
    private var capacity = 0
    private(set) var count = 0

    private static var stride: Int { MemoryLayout<DiskCache.Found>.stride }

    deinit {
        if let base { munmap(base, capacity * Self.stride) }
    }

    /// Adds one; false when no memory could be had (the rest of the folder is left out).
    mutating func append(_ found: DiskCache.Found) -> Bool {
        if count == capacity {
            let more = max(4096, capacity * 2)
            let bytes = more * Self.stride
            let p = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
            guard p != MAP_FAILED, let grown = p else { return false }
            if let base {
                grown.copyMemory(from: base, byteCount: count * Self.stride)
                munmap(base, capacity * Self.stride)
            }
            base = grown
            capacity = more
        }
        guard let base else { return false }
        base.advanced(by: count * Self.stride).initializeMemory(as: DiskCache.Found.self, to: found)
        count += 1
        return true
    }

    /// The records, to read or reorder in place.
    func withRecords<R>(_ body: (UnsafeMutableBufferPointer<DiskCache.Found>) -> R) -> R {
        guard let base else { return body(UnsafeMutableBufferPointer(start: nil, count: 0)) }
        return body(UnsafeMutableBufferPointer(start: base.assumingMemoryBound(to: DiskCache.Found.self), count: count))
    }

    /// Sorts so that `first(a, b)` holds for every earlier `a` and later `b`: a heap sort,
    /// in place, with no allocation.
    func sort(by first: (DiskCache.Found, DiskCache.Found) -> Bool) {
        withRecords { r in
            let n = r.count
            // A heap whose root is the one that goes last.
            func sift(_ start: Int, _ end: Int) {
                var root = start
                while true {
                    var child = 2 * root + 1
                    guard child < end else { return }
                    if child + 1 < end, first(r[child], r[child + 1]) { child += 1 }
                    guard first(r[root], r[child]) else { return }
                    r.swapAt(root, child)
                    root = child
                }
            }
            var i = n / 2
            while i > 0 {
                i -= 1
                sift(i, n)
            }
            var end = n
            while end > 1 {
                end -= 1
                r.swapAt(0, end)
                sift(0, end)
            }
        }
    }
}
