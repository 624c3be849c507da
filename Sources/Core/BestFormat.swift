import Foundation

/// `format=best` (SPEC: Efficiency): what a render weighs, each lossy format at the quality
/// `q=auto` chooses for it and the lossless ones as they are, the smallest served.
public struct BestCandidates: Equatable, Sendable, Codable {
    /// The lossy formats, in the order they are tried: the one most often smallest first,
    /// so that the others' searches can stop as soon as they cannot win.
    public var lossy: [ImageFormat]
    /// PNG, and WebP where the client takes it, lossless: weighed when the result has
    /// alpha (`losslessAlways`) or, else, when its picture has few colours.
    public var lossless: [ImageFormat]
    public var losslessAlways: Bool

    public init(lossy: [ImageFormat], lossless: [ImageFormat], losslessAlways: Bool) {
        self.lossy = lossy
        self.lossless = lossless
        self.losslessAlways = losslessAlways
    }

    /// The order lossy formats are tried in (the usual order of their sizes at one SSIM).
    static let tryOrder: [ImageFormat] = [.avif, .jxl, .webp, .jpeg]

    /// The formats only a client that lists them gets; JPEG and PNG every client shows.
    static let asked: [ImageFormat] = [.avif, .jxl, .webp]

    /// The candidates for a client that sends `accept`, among `limits.bestFormats`; a
    /// result with alpha weighs no JPEG (it cannot show the alpha) and always the
    /// lossless formats. Never empty: with no lossy format left, `fallback` (auto's
    /// choice) stands in.
    public static func candidates(accept: String?, resultHasAlpha: Bool, limits: RequestLimits, fallback: ImageFormat)
        -> BestCandidates
    {
        func taken(_ f: ImageFormat) -> Bool {
            guard asked.contains(f) else { return true }
            return accept.map { AcceptHeader.accepts($0, f.mimeType) } ?? false
        }
        var lossy = tryOrder.filter { limits.bestFormats.contains($0) && taken($0) }
        if resultHasAlpha { lossy.removeAll { $0 == .jpeg } }
        let lossless: [ImageFormat] = [.png] + (limits.bestFormats.contains(.webp) && taken(.webp) ? [.webp] : [])
        if lossy.isEmpty, AutoQuality.formats.contains(fallback), !(resultHasAlpha && fallback == .jpeg) {
            lossy = [fallback]
        }
        return BestCandidates(lossy: lossy, lossless: lossless, losslessAlways: resultHasAlpha || lossy.isEmpty)
    }

    /// Whether a worker's answer in `format` is one these candidates allow.
    public func allows(_ format: ImageFormat) -> Bool { lossy.contains(format) || lossless.contains(format) }

    /// Of two results of the same size, the one cheaper to decode wins (SPEC): JPEG, PNG,
    /// WebP, AVIF, then JPEG XL.
    public static func decodeRank(_ format: ImageFormat) -> Int {
        [ImageFormat.jpeg, .png, .webp, .avif, .jxl].firstIndex(of: format) ?? 5
    }
}

/// What `format=best` chose: the format, and whether it is WebP's lossless mode.
public struct BestChoice: Equatable, Sendable, Codable {
    public var format: ImageFormat
    public var lossless: Bool

    public init(format: ImageFormat, lossless: Bool) {
        self.format = format
        self.lossless = lossless
    }

    /// As `X-Format-Chosen` and the metric's label say it: the format's name, and
    /// `webp-lossless` for WebP's lossless mode (PNG is always lossless: `png`).
    public var name: String { lossless && format == .webp ? "webp-lossless" : format.rawValue }

    /// Every name a choice may have, for the metric's labels.
    public static let names = ["avif", "jxl", "webp", "webp-lossless", "jpeg", "png"]

    /// The choice a name says, or nil.
    public init?(name: String) {
        if name == "webp-lossless" {
            self.init(format: .webp, lossless: true)
        } else if let f = ImageFormat(rawValue: name), Self.names.contains(name) {
            self.init(format: f, lossless: f == .png)
        } else {
            return nil
        }
    }
}

extension AcceptHeader {
    /// What `format=best`'s answer depends on in `accept`, as a tag for the cache key:
    /// `best` and each of `formats` that only a listing client takes (`best+avif+webp`).
    public static func bestTag(_ accept: String?, formats: [ImageFormat]) -> String {
        guard let accept else { return "best" }
        let taken = BestCandidates.asked.filter { formats.contains($0) && accepts(accept, $0.mimeType) }
        return (["best"] + taken.map(\.rawValue)).joined(separator: "+")
    }
}
