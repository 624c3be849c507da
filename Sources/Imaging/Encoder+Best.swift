internal import CVips
import Core

// `format=best` (SPEC: Efficiency): every candidate the client takes, the smallest served.
extension Encoder {
    /// A picture with at most this many colours is a drawing to `format=best`: PNG and
    /// lossless WebP are weighed too (a resized photo has tens of thousands; a screenshot
    /// of text or a chart, anti-aliased, a few hundred to a few thousand).
    static let fewColours = 4096

    /// A search that cannot win any more: an encode that falls short of the floor is
    /// already larger than the smallest result, and a higher quality only grows it.
    private enum Search: Error {
        case outdone
        case failed(ImagingError)
    }

    /// Each lossless candidate when the picture has alpha or few colours, as it is; each
    /// lossy one at the quality `q=auto` finds for it (one whose results cannot be decoded
    /// again to be measured is left out); the smallest, ties to the cheaper decode.
    /// `encode(image, format, quality, lossless)` makes one result as it would be served.
    static func best(
        _ image: VImage, _ candidates: BestCandidates, _ target: AutoQuality,
        encode: (VImage, ImageFormat, Int?, Bool) throws(ImagingError) -> [UInt8]
    ) throws(ImagingError) -> Encoded {
        var smallest: Encoded?
        func consider(_ bytes: [UInt8], _ choice: BestChoice, quality: Int?) {
            if let s = smallest, let was = s.chosen {
                guard
                    bytes.count < s.bytes.count
                        || bytes.count == s.bytes.count
                            && BestCandidates.decodeRank(choice.format) < BestCandidates.decodeRank(was.format)
                else { return }
            }
            smallest = Encoded(bytes: bytes, quality: quality, chosen: choice)
        }
        if candidates.losslessAlways || hasFewColours(image) {
            for format in candidates.lossless {
                consider(try encode(image, format, nil, true), BestChoice(format: format, lossless: true), quality: nil)
            }
        }
        let reference = try LumaSSIM(image)
        for format in candidates.lossy where format != .avif || avifAvailable {
            func lossy(_ q: Int) throws(Search) -> [UInt8] {
                do throws(ImagingError) { return try encode(image, format, q, false) } catch { throw .failed(error) }
            }
            do throws(Search) {
                let found = try searchQuality(
                    image, format: format, target, reference: reference, encode: lossy,
                    seen: { bytes, kept throws(Search) in
                        if !kept, let s = smallest, bytes.count >= s.bytes.count { throw .outdone }
                    })
                guard let found, let q = found.quality else { continue }
                let bytes = found.bytes.isEmpty ? try lossy(q) : found.bytes
                consider(bytes, BestChoice(format: format, lossless: false), quality: found.quality)
            } catch {
                switch error {
                case .outdone: continue
                case .failed(let e): throw e
                }
            }
        }
        // Nothing weighed: AVIF alone was, and this libvips cannot write it.
        guard let smallest else { throw ImagingError(.encode, unavailable) }
        return smallest
    }

    /// Whether an 8-bit picture has at most `fewColours` colours (its first three bands;
    /// one or two bands, grey, always has). One bit per 24-bit colour, so a drawing's
    /// every pixel costs a load and a store, and a photo stops after a few thousand.
    static func hasFewColours(_ image: VImage) -> Bool {
        guard image.bandFormat == VIPS_FORMAT_UCHAR else { return false }
        let bands = image.bands
        guard bands >= 3 else { return true }
        var seen = [UInt64](repeating: 0, count: (1 << 24) / 64)
        var count = 0
        let few: Bool? = try? image.withPixels { raw in
            seen.withUnsafeMutableBufferPointer { bits in
                var i = 0
                while i + 2 < raw.count {
                    let c = Int(raw[i]) << 16 | Int(raw[i + 1]) << 8 | Int(raw[i + 2])
                    let (word, bit) = (c >> 6, UInt64(1) << UInt64(c & 63))
                    if bits[word] & bit == 0 {
                        bits[word] |= bit
                        count += 1
                        if count > fewColours { return false }
                    }
                    i += bands
                }
                return true
            }
        }
        return few ?? false
    }
}
