/// Damaged copies of image files, for the tests that feed them to the pipeline: the same
/// seed gives the same damage, so every failure replays.
public enum Mutation {
    /// `original` with one of four kinds of damage: a few bit flips, a truncation, its
    /// header spliced onto the body of one of `others`, or bytes overwritten in its header.
    public static func mutate(_ original: [UInt8], others: [[UInt8]], using g: inout SeededRandom) -> [UInt8] {
        var bytes = original
        switch Int.random(in: 0..<4, using: &g) {
        case 0:
            for _ in 0..<Int.random(in: 1...8, using: &g) {
                let i = Int.random(in: 0..<bytes.count, using: &g)
                bytes[i] ^= UInt8(1 << Int.random(in: 0..<8, using: &g))
            }
        case 1:
            bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &g)))
        case 2:
            let other = others[Int.random(in: 0..<others.count, using: &g)]
            let cut = Int.random(in: 1..<min(64, bytes.count), using: &g)
            bytes = Array(bytes.prefix(cut)) + other.dropFirst(min(cut, other.count - 1))
        default:
            for _ in 0..<Int.random(in: 1...4, using: &g) {
                bytes[Int.random(in: 0..<min(48, bytes.count), using: &g)] = UInt8.random(in: 0...255, using: &g)
            }
        }
        return bytes
    }
}
