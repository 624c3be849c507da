import Core
import Foundation
import Imaging
import TestSupport
import Testing

/// Mutated JPEG, PNG, WebP and GIF files through the whole pipeline: each is a thumbnail
/// or a typed error (415, or 413 when a mutated header claims a huge size), never a
/// crash or a hang. (Memory over the same files is measured in a process of its own, by
/// `ThumbCommandTests`: other suites running beside this one move this process's RSS.)
@Suite struct MutationTests {
    @Test func sixHundredMutatedSourcesGiveAThumbnailOrATypedError() throws {
        let fixtures = try Fixtures()
        let raw = Fixtures.quadrants(width: 96, height: 64)
        // The larger JPEG is 6.7× the thumbnail: it goes through JPEG shrink-on-load.
        let originals: [(String, [UInt8])] = try [
            ("jpg", ImageFile.encode(raw, as: .jpeg)), ("png", ImageFile.encode(raw, as: .png)),
            ("webp", ImageFile.encode(raw, as: .webp)), ("gif", ImageFile.encode(raw, as: .gif)),
            ("jpg", ImageFile.encode(Fixtures.quadrants(width: 480, height: 320), as: .jpeg)),
        ]
        let t = try Thumbnailer(limits: ImagingLimits())
        var g = SeededRandom(seed: 0xBAD_F11E)
        var outcomes: [String: Int] = [:]
        for n in 0..<600 {
            let (ext, original) = originals[n % originals.count]
            let bytes = Mutation.mutate(original, others: originals.map(\.1), using: &g)
            let path = try fixtures.write("m\(n).\(ext)", bytes)
            do {
                let r = try t.thumbnail(
                    path: path, request: request("w=48&h=48&mode=fill"), requestLimits: RequestLimits())
                #expect(r.plan.output == Size(width: 48, height: 48))
                outcomes["ok", default: 0] += 1
            } catch let e as ImagingError {
                #expect([.unsupportedSource, .sourceTooLarge].contains(e.error.code), "m\(n).\(ext): \(e)")
                outcomes[e.error.code.rawValue, default: 0] += 1
            }
            unlink(path)
        }
        // Both outcomes occur, or the mutations prove nothing.
        #expect(outcomes["ok", default: 0] > 20 && outcomes["unsupported_source", default: 0] > 100, "\(outcomes)")
    }

    /// A PNG that claims 30000×30000 pixels in a few hundred bytes.
    static func bomb() -> [UInt8] {
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

    @Test func aDecompressionBombIsRefusedFromItsHeaderAtOnce() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.write("bomb.png", Self.bomb())
        let t = try Thumbnailer(limits: ImagingLimits())
        do {
            _ = try t.thumbnail(path: path, request: request("w=100"), requestLimits: RequestLimits())
            Issue.record("a 30000×30000 image was accepted")
        } catch let e as ImagingError {
            #expect(e.error.code == .sourceTooLarge && e.stage == .limits, "\(e)")
            #expect(e.error.message.contains("900000000 pixels"))
        }
        // The stage says it was refused from the header, before any decode. (No timing and
        // no RSS here: other suites share this process and move both. Through the binary,
        // its 413 came in about 1 ms with the server's peak RSS at 50 MB: BENCHMARKS.md.)
    }
}
