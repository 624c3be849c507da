import Core
import Foundation
import HTTP
import Placeholders
import Stores

/// What `/info` is asked for beyond the source.
struct InfoOptions: Sendable {
    /// Any `/thumb` parameter was given: say what `/thumb` would return.
    var wantsOutput: Bool
}

/// The JSON of `/info` (SPEC: Info), keys in SPEC's order. Every string goes through one
/// escaper (`JSON.string`), so a source's format, a codec or a colour with a quote, a backslash
/// or a control character in it keeps the document valid.
enum InfoDocument {
    ///
    /// `chosen`: `format=best`'s choice for this output as its `/thumb` made it (and the
    /// quality), when it has been made. Until then the output says `"format": "best"` and
    /// the formats it weighs, and `undecided` is set: such an answer is not kept.
    static func make(
        _ facts: SourceFacts, request: ThumbRequest, limits: RequestLimits, accept: String?, withOutput: Bool,
        chosen: (choice: BestChoice, quality: Int?)? = nil
    ) throws(ServiceFailure) -> [UInt8] {
        var undecided = false
        return try make(
            facts, request: request, limits: limits, accept: accept, withOutput: withOutput, chosen: chosen,
            undecided: &undecided)
    }

    static func make(
        _ facts: SourceFacts, request: ThumbRequest, limits: RequestLimits, accept: String?, withOutput: Bool,
        chosen: (choice: BestChoice, quality: Int?)?, undecided: inout Bool
    ) throws(ServiceFailure) -> [UInt8] {
        let d = facts.description
        let (w, h, rgba) = (facts.previewWidth, facts.previewHeight, facts.previewRGBA)
        // BlurHash has no alpha: a transparent part counts as the white a page shows.
        var rgb = [UInt8]()
        rgb.reserveCapacity(w * h * 3)
        for i in stride(from: 0, to: rgba.count - 3, by: 4) {
            let a = Int(rgba[i + 3])
            for k in 0..<3 { rgb.append(UInt8((Int(rgba[i + k]) * a + 255 * (255 - a) + 127) / 255)) }
        }
        guard let thumbhash = ThumbHash.encode(width: w, height: h, rgba: rgba),
            let blurhash = BlurHash.encode(width: w, height: h, rgb: rgb, x: 4, y: 3)
        else {
            throw ServiceFailure(
                AspectError(.internalError, "the placeholders could not be made"), stage: "describe",
                detail: "a preview of \(w)×\(h) with \(rgba.count) bytes")
        }
        var source: [(String, String)] = [
            ("width", "\(d.size.width)"), ("height", "\(d.size.height)"), ("format", JSONText.string(d.format)),
            ("hasAlpha", "\(d.hasAlpha)"), ("orientation", "\(facts.orientation)"), ("frames", "\(facts.frames)"),
            ("pages", "\(facts.pages)"),
        ]
        if let video = facts.video {
            // A video's stream (SPEC: Video): seconds and frames a second, to the millisecond.
            source += [
                ("duration", NumberSyntax.text((video.duration * 1000).rounded() / 1000)),
                ("codec", JSONText.string(video.codec)),
                ("fps", NumberSyntax.text((video.fps * 1000).rounded() / 1000)),
            ]
        }
        source.append(("bytes", "\(d.bytes)"))
        var document: [(String, String)] = [
            ("source", JSONText.object(source)), ("ratio", "\(Double(d.size.width) / Double(d.size.height))"),
            ("thumbhash", JSONText.string(Data(thumbhash).base64EncodedString())),
            ("blurhash", JSONText.string(blurhash)), ("averageColor", JSONText.string(Colours.average(rgba: rgba))),
            ("dominantColor", JSONText.string(Colours.dominant(rgba: rgba))),
        ]
        if let faces = facts.faces {
            // Fractions of the upright picture, to four places (a 10,000-pixel side's pixel).
            func fraction(_ v: Double) -> String { NumberSyntax.text((v * 10000).rounded() / 10000) }
            let boxes = faces.map { f in
                JSONText.object([
                    ("x", fraction(f.x)), ("y", fraction(f.y)), ("w", fraction(f.w)), ("h", fraction(f.h)),
                ])
            }
            document.append(("faces", "[" + boxes.joined(separator: ",") + "]"))
        }
        if withOutput {
            // The same plan /thumb makes: its errors are /thumb's too.
            let order: RenderOrder
            do throws(AspectError) {
                order = try RenderOrder.plan(request, source: d, limits: limits, accept: accept)
            } catch {
                throw ServiceFailure(error, stage: "header")
            }
            var output = [
                ("width", "\(order.resultSize.width)"), ("height", "\(order.resultSize.height)"),
                ("format", JSONText.string(order.format.rawValue)),
            ]
            if let best = order.best {
                if let chosen {
                    output[2] = ("format", JSONText.string(chosen.choice.format.rawValue))
                    output.append(("chosen", JSONText.string(chosen.choice.name)))
                    if let q = chosen.quality { output.append(("quality", "\(q)")) }
                } else {
                    let names = best.lossy.map(\.rawValue) + best.lossless.map { $0 == .webp ? "webp-lossless" : "png" }
                    output[2] = ("format", JSONText.string("best"))
                    output.append(("candidates", "[" + names.map { JSONText.string($0) }.joined(separator: ",") + "]"))
                    undecided = true
                }
            }
            document.append(("output", JSONText.object(output)))
        }
        return Array((JSONText.object(document) + "\n").utf8)
    }
}

/// JSON text written by hand in a fixed key order (Foundation's encoder sorts or scrambles
/// keys); strings by HTTP's `JSON.string`, the one escaper of error bodies and logs.
enum JSONText {
    /// `value` as a JSON string, or `null` for nil.
    static func string(_ value: String?) -> String { value.map(JSON.string) ?? "null" }

    /// An object of members in this order; each value already JSON text.
    static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { JSON.string($0.0) + ": " + $0.1 }.joined(separator: ", ") + "}"
    }
}
