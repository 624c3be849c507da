/// Damaged copies of image files, for the tests that feed them to the pipeline: the same
/// seed gives the same damage, so every failure replays.
public enum Mutation {
    /// `original` with one of four kinds of damage: a few bit flips, a truncation, its
    /// header spliced onto the body of one of `others`, or bytes overwritten in its header.
    static func mutate(_ original: [UInt8], others: [[UInt8]], using g: inout SeededRandom) -> [UInt8] {
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

    /// `count` damaged files named `m000.ext`, `m001.ext`, … (so name order is the order
    /// made), taking the originals in turn: the same originals and seed give the same files.
    public static func files(from originals: [(ext: String, bytes: [UInt8])], count: Int, seed: UInt64) -> [(
        name: String, bytes: [UInt8]
    )] {
        var g = SeededRandom(seed: seed)
        let bodies = originals.map(\.bytes)
        return (0..<count).map { n in
            let (ext, original) = originals[n % originals.count]
            let number = String(n)
            let name = "m" + String(repeating: "0", count: max(0, 3 - number.count)) + number + "." + ext
            return (name, mutate(original, others: bodies, using: &g))
        }
    }

    /// A PNG that claims 30000×30000 pixels in a few hundred bytes: 2.7 GB decoded.
    public static func pngBomb() -> [UInt8] {
        func crc32(_ bytes: [UInt8]) -> UInt32 {
            var c: UInt32 = 0xFFFF_FFFF
            for b in bytes {
                c ^= UInt32(b)
                for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            }
            return c ^ 0xFFFF_FFFF
        }
        func be(_ v: UInt32) -> [UInt8] {
            [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
        }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return be(UInt32(data.count)) + body + be(crc32(body))
        }
        let ihdr = be(30000) + be(30000) + [8, 2, 0, 0, 0]
        // A zlib stream of a few bytes: far too short for the image, which is never decoded.
        let idat: [UInt8] = [0x78, 0x9C, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", ihdr) + chunk("IDAT", idat)
            + chunk("IEND", [])
    }
}
