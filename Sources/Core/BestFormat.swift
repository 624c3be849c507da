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
        let taken = taken(by: accept, among: limits.bestFormats)
        var lossy = tryOrder.filter(taken.contains)
        if resultHasAlpha { lossy.removeAll { $0 == .jpeg } }
        let lossless: [ImageFormat] = [.png] + (taken.contains(.webp) ? [.webp] : [])
        if lossy.isEmpty, AutoQuality.formats.contains(fallback), !(resultHasAlpha && fallback == .jpeg) {
            lossy = [fallback]
        }
        return BestCandidates(lossy: lossy, lossless: lossless, losslessAlways: resultHasAlpha || lossy.isEmpty)
    }

    /// Those of `formats` a client that sends `accept` takes: JPEG and PNG whatever it
    /// sends, the rest where `Accept` names them.
    static func taken(by accept: String?, among formats: [ImageFormat]) -> Set<ImageFormat> {
        Set(formats.filter { f in !asked.contains(f) || accept.map { AcceptHeader.accepts($0, f.mimeType) } == true })
    }

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
        let taken = BestCandidates.taken(by: accept, among: formats)
        return (["best"] + BestCandidates.asked.filter(taken.contains).map(\.rawValue)).joined(separator: "+")
    }
}
