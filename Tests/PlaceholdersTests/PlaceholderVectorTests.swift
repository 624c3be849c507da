import AspectClient
import Foundation
import Placeholders
import TestSupport
import Testing

/// Tests/Fixtures/placeholder-vectors.json: images with their ThumbHash and BlurHash by
/// PyPI's reference packages (Tests/Fixtures/make-placeholder-vectors.sh). Ours must be the same
/// strings; decoded back, they must show the image's colours.
@Suite struct PlaceholderVectorTests {
    struct Vector: Decodable, Sendable, CustomTestStringConvertible {
        let name: String
        let width: Int
        let height: Int
        let rgba: String
        let thumbhash: String?
        let blurhash: String
        var testDescription: String { name }

        var pixels: [UInt8] { [UInt8](Data(base64Encoded: rgba) ?? Data()) }
        var rgb: [UInt8] {
            // BlurHash has no alpha: the reference reads the RGB as stored.
            var out: [UInt8] = []
            let p = pixels
            for i in stride(from: 0, to: p.count, by: 4) { out += p[i..<(i + 3)] }
            return out
        }
    }

    static let vectors: [Vector] = {
        struct Document: Decodable { let vectors: [Vector] }
        return fixture("placeholder-vectors.json", as: Document.self)?.vectors ?? []
    }()

    @Test func theFixtureIsThere() {
        #expect(Self.vectors.count >= 8)
        #expect(Self.vectors.filter { $0.thumbhash != nil }.count >= 6)
    }

    @Test(arguments: vectors)
    func blurHashIsTheReferences(_ v: Vector) {
        #expect(BlurHash.encode(width: v.width, height: v.height, rgb: v.rgb, x: 4, y: 3) == v.blurhash)
    }

    @Test(arguments: vectors.filter { $0.thumbhash != nil })
    func thumbHashIsTheReferences(_ v: Vector) throws {
        let ours = try #require(ThumbHash.encode(width: v.width, height: v.height, rgba: v.pixels))
        #expect(Data(ours).base64EncodedString() == v.thumbhash)
    }

    /// Decoded back (ThumbHash by the client's decoder), each hash's mean colour is within
    /// 12 levels of 255 a channel of the image's own (alpha-weighted for ThumbHash, in
    /// linear light for BlurHash, as each is made), and a ThumbHash tells landscape from
    /// portrait as the image does.
    @Test(arguments: vectors)
    func decodedHashesShowTheImagesColours(_ v: Vector) throws {
        let p = v.pixels
        var (r, g, b, a) = (0.0, 0.0, 0.0, 0.0)
        for i in stride(from: 0, to: p.count, by: 4) {
            let w = Double(p[i + 3]) / 255
            r += Double(p[i]) * w
            g += Double(p[i + 1]) * w
            b += Double(p[i + 2]) * w
            a += w
        }
        let mean = (r / a, g / a, b / a)
        let hash = try #require(ThumbHash.encode(width: v.width, height: v.height, rgba: p))
        let decoded = try #require(ThumbHashImage(hash: hash))
        let c = decoded.averageColor
        for (ours, theirs) in [(c.red, mean.0), (c.green, mean.1), (c.blue, mean.2)] {
            #expect(abs(ours - theirs) <= 12, "ThumbHash of \(v.name): \(c) against \(mean)")
        }
        // The ratio is coarse (5 or 7 steps a side): clearly landscape or portrait is told.
        let ratio = Double(v.width) / Double(v.height)
        if ratio > 1.25 || ratio < 0.8 {
            #expect(
                (decoded.width > decoded.height) == (ratio > 1),
                "\(decoded.width)×\(decoded.height) for \(v.width)×\(v.height)")
        }

        // BlurHash holds no alpha and works in linear light: its decoded mean, taken in
        // linear light too, against the image's RGB mean in linear light.
        func linearMean(_ bytes: [UInt8], _ k: Int) -> Double {
            let values = stride(from: k, to: bytes.count, by: 3).map { Double(bytes[$0]) / 255 }
            let linear = values.map { $0 <= 0.04045 ? $0 / 12.92 : pow(($0 + 0.055) / 1.055, 2.4) }
            let m = linear.reduce(0, +) / Double(linear.count)
            return 255 * (m <= 0.0031308 ? m * 12.92 : 1.055 * pow(m, 1 / 2.4) - 0.055)
        }
        let back = try #require(BlurHash.decode(v.blurhash, width: 32, height: 32))
        for k in 0..<3 {
            let (ours, theirs) = (linearMean(back, k), linearMean(v.rgb, k))
            #expect(abs(ours - theirs) <= 12, "BlurHash of \(v.name), channel \(k): \(ours) against \(theirs)")
        }
    }
}
