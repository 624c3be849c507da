/// Whether two colours are within `tolerance` on every band (JPEG is lossy).
public func near(_ a: [UInt8], _ b: [UInt8], _ tolerance: Int = 40) -> Bool {
    a.count >= b.count && zip(a, b).allSatisfy { abs(Int($0) - Int($1)) <= tolerance }
}
