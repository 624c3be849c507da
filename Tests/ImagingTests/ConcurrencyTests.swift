import Core
import Foundation
import Imaging
import Synchronization
import Testing

@Suite struct ConcurrencyTests {
    @Test func eightThreadsGiveTheBytesOfOne() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.write("c.jpg", ImageFile.encode(Fixtures.quadrants(width: 800, height: 600), as: .jpeg))
        let queries = [
            "w=300&h=225&mode=fill&format=jpeg", "w=200&h=200&mode=fill&shape=circle&format=png",
            "w=250&h=250&mode=pad&format=webp", "w=120&mode=fit&format=jpeg&dpr=2",
        ]
        let t = try Thumbnailer(limits: ImagingLimits())
        let requests = try queries.map { try request($0) }
        let reference = try requests.map {
            try t.thumbnail(path: path, request: $0, requestLimits: RequestLimits()).bytes
        }

        let results = Mutex<[[UInt8]?]>(Array(repeating: nil, count: 8 * 5 * requests.count))
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<5 {
                for (i, r) in requests.enumerated() {
                    let bytes = try? t.thumbnail(path: path, request: r, requestLimits: RequestLimits()).bytes
                    results.withLock { $0[(thread * 5 + round) * requests.count + i] = bytes }
                }
            }
        }
        let all = results.withLock { $0 }
        for (k, bytes) in all.enumerated() {
            #expect(bytes == reference[k % requests.count], "job \(k) differs from the one-thread result")
        }
    }
}
