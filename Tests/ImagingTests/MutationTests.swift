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
        let originals: [(ext: String, bytes: [UInt8])] = try [
            ("jpg", ImageFile.encode(raw, as: .jpeg)), ("png", ImageFile.encode(raw, as: .png)),
            ("webp", ImageFile.encode(raw, as: .webp)), ("gif", ImageFile.encode(raw, as: .gif)),
            ("jpg", ImageFile.encode(Fixtures.quadrants(width: 480, height: 320), as: .jpeg)),
        ]
        let outcomes = try Self.outcomes(
            Mutation.files(from: originals, count: 600, seed: 0xBAD_F11E), in: fixtures,
            allowed: [.unsupportedSource, .sourceTooLarge])
        // Both outcomes occur, or the mutations prove nothing.
        #expect(outcomes["ok", default: 0] > 20 && outcomes["unsupported_source", default: 0] > 100, "\(outcomes)")
    }

    /// The vector seeds: an SVG with the parts the sanitiser keeps and drops, and a
    /// two-page PDF, mutated: each is a thumbnail or a typed error (a page count or a size
    /// a mutation garbles is a 400 or a 413), never a crash or a hang.
    @Test func threeHundredMutatedSVGsAndPDFsGiveAThumbnailOrATypedError() throws {
        let fixtures = try Fixtures()
        let svg = """
            <?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" \
            viewBox="0 0 120 90"><defs><linearGradient id="g"><stop offset="0" stop-color="#2a7bd6"/>\
            <stop offset="1" stop-color="#7a3fc4"/></linearGradient><clipPath id="c"><circle cx="40" cy="45" r="30"/>\
            </clipPath><filter id="f"><feGaussianBlur stdDeviation="2"/></filter></defs>\
            <rect width="120" height="90" rx="12" fill="url(#g)"/><g clip-path="url(#c)" filter="url(#f)">\
            <path d="M0 0 L60 90 L120 0 Z" fill="#ffd23f"/></g><use xlink:href="#c"/>\
            <style>circle { stroke: white }</style><script>alert(1)</script></svg>
            """
        let pdf = ImageFile.pdf(pages: [
            ImageFile.Page(width: 120, height: 90, rgb: (32, 84, 140), band: (240, 200, 60)),
            ImageFile.Page(width: 90, height: 120, rgb: (200, 60, 50)),
        ])
        let originals = [("svg", Array(svg.utf8)), ("pdf", pdf)]
        let outcomes = try Self.outcomes(
            Mutation.files(from: originals, count: 300, seed: 0x5EED_5), in: fixtures,
            allowed: [.unsupportedSource, .sourceTooLarge, .badParam])
        #expect(outcomes["ok", default: 0] > 20 && outcomes["unsupported_source", default: 0] > 20, "\(outcomes)")
    }

    /// Each file through a 48×48 fill: a thumbnail of that size, or an error of an
    /// `allowed` code; how many of each.
    static func outcomes(
        _ files: [(name: String, bytes: [UInt8])], in fixtures: Fixtures, allowed: Set<AspectError.Code>,
        limits: ImagingLimits = ImagingLimits()
    ) throws -> [String: Int] {
        let t = try Thumbnailer(limits: limits)
        var outcomes: [String: Int] = [:]
        for (name, bytes) in files {
            let path = try fixtures.write(name, bytes)
            let started = Date()
            defer {
                // Never a hang: within the processing deadline, when there is one, and a margin.
                let seconds = Date().timeIntervalSince(started)
                if limits.processingTimeoutMs > 0 {
                    #expect(seconds < Double(limits.processingTimeoutMs) / 1000 + 2, "\(name) took \(seconds) s")
                }
            }
            do {
                let r = try t.thumbnail(
                    path: path, request: request("w=48&h=48&mode=fill"), requestLimits: RequestLimits())
                #expect(r.plan.output == Size(width: 48, height: 48))
                outcomes["ok", default: 0] += 1
            } catch let e as ImagingError {
                #expect(allowed.contains(e.error.code), "\(name): \(e)")
                outcomes[e.error.code.rawValue, default: 0] += 1
            }
            unlink(path)
        }
        return outcomes
    }

    /// Truncated, bit-flipped and spliced clips (H.264 MP4, VP9 WebM): a thumbnail or a
    /// typed error, within the processing deadline; never a crash or an internal error.
    @Test func twoHundredMutatedClipsGiveAThumbnailOrATypedError() throws {
        let fixtures = try Fixtures()
        let frames = VideoTests.frames(seconds: 3, fps: 8, width: 96, height: 64)
        var originals: [(ext: String, bytes: [UInt8])] = []
        for (name, codec) in [("mp4", ImageFile.VideoCodec.h264), ("webm", .vp9)] {
            let path = fixtures.dir.appendingPathComponent("seed.\(name)").path
            try ImageFile.writeClip(to: path, frames: frames, fps: 8, codec: codec, keyframeEvery: 8)
            originals.append((name, try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))))
        }
        var limits = ImagingLimits()
        limits.processingTimeoutMs = 5000
        let outcomes = try Self.outcomes(
            Mutation.files(from: originals, count: 200, seed: 0xC11_95), in: fixtures,
            allowed: [.unsupportedSource, .sourceTooLarge, .badParam, .processingTimeout], limits: limits)
        #expect(outcomes["ok", default: 0] > 20 && outcomes["unsupported_source", default: 0] > 20, "\(outcomes)")
    }

    @Test func aDecompressionBombIsRefusedFromItsHeaderAtOnce() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.write("bomb.png", Mutation.pngBomb())
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
        // ServiceTests checks the server's peak RSS after the same file.)
    }
}
