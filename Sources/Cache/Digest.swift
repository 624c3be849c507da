import Hashing

/// A cache's key: 32 bytes (a SHA-256), held as four words rather than 64 hex digits, so
/// an index entry carries 32 bytes of key and no allocation.
public struct Digest: Hashable, Sendable {
    var a: UInt64
    var b: UInt64
    var c: UInt64
    var d: UInt64

    /// From 64 hex digits (either case); nil for anything else.
    public init?(hex: some StringProtocol) {
        var words: [UInt64] = []
        words.reserveCapacity(4)
        var word: UInt64 = 0
        var digits = 0
        for u in hex.utf8 {
            let v: UInt8
            switch u {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = u - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = u - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = u - UInt8(ascii: "A") + 10
            default: return nil
            }
            guard digits < 64 else { return nil }
            word = word << 4 | UInt64(v)
            digits += 1
            if digits % 16 == 0 {
                words.append(word)
                word = 0
            }
        }
        guard digits == 64 else { return nil }
        (a, b, c, d) = (words[0], words[1], words[2], words[3])
    }

    /// The 64 lower-case hex digits it was made from.
    public var hex: String {
        Hex.string([a, b, c, d].flatMap { word in (0..<8).map { UInt8(truncatingIfNeeded: word >> (56 - 8 * $0)) } })
    }
}
