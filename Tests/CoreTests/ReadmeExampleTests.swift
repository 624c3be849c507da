import Testing

@testable import Core

/// The README's worked examples, parsed and planned as a request would be.
@Suite struct ReadmeExampleTests {
    static let landscape: [(String, Size?)] = [
        ("ratio=4:3&w=300&mode=fill", size(300, 225)),
        ("w=300&h=300", size(300, 225)),
        ("w=300&h=300&mode=fill", size(300, 300)),
        ("w=300&h=300&mode=fill&gravity=west", size(300, 300)),
        ("w=300&h=300&mode=fill&gravity=focus&fx=0.6", size(300, 300)),
        ("w=300&h=300&mode=pad", size(300, 300)),
        ("w=300&h=300&mode=stretch", size(300, 300)),
        ("w=300", size(300, 225)),
        ("h=300", size(400, 300)),
        ("ratio=1&mode=fill", size(3000, 3000)),
        ("ratio=1", size(3000, 2250)),
        ("w=300&ratio=4:3&mode=fill&dpr=2", size(600, 450)),
        ("w=200&h=200&mode=fill&shape=circle", size(200, 200)),
        ("w=2100&h=100&dpr=2", nil),
    ]

    @Test(arguments: landscape)
    func onA4000x3000Source(query: String, output: Size?) throws {
        let r = try ThumbRequest.parse(query: "src=photo.jpg&" + query, limits: defaultLimits)
        switch planOrCode(size(4000, 3000), r) {
        case .success(let plan): #expect(plan.output == output)
        case .failure(let e): #expect(output == nil && e.code == .badParam, "\(e)")
        }
    }

    static let small: [(String, Size)] = [
        ("w=400&h=400&mode=fill", size(100, 100)),
        ("w=400&h=400&mode=fill&upscale=1", size(400, 400)),
        ("w=400&h=400", size(200, 100)),
        ("w=400&h=400&mode=pad", size(200, 200)),
        ("w=400&h=400&mode=stretch", size(100, 100)),
    ]

    @Test(arguments: small)
    func onA200x100Source(query: String, output: Size) throws {
        let r = try ThumbRequest.parse(query: "src=photo.jpg&" + query, limits: defaultLimits)
        #expect(try planOrCode(size(200, 100), r).get().output == output)
    }
}
