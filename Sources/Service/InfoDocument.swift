import Core
import Foundation
import Placeholders
import Stores

/// What `/info` is asked for beyond the source.
struct InfoOptions: Sendable {
    /// Any `/thumb` parameter was given: say what `/thumb` would return.
    var wantsOutput: Bool
}

/// The JSON of `/info` (SPEC: Info), keys in SPEC's order.
enum InfoDocument {
    static func make(
        _ facts: SourceFacts, request: ThumbRequest, limits: RequestLimits, accept: String?, withOutput: Bool
    ) throws(ServiceFailure) -> [UInt8] {
        let d = facts.description
        let (w, h, rgba) = (facts.previewWidth, facts.previewHeight, facts.previewRGBA)
        let thumbhash = Data(ThumbHash.encode(width: w, height: h, rgba: rgba)).base64EncodedString()
        // BlurHash has no alpha: a transparent part counts as the white a page shows.
        var rgb = [UInt8]()
        rgb.reserveCapacity(w * h * 3)
        for i in stride(from: 0, to: rgba.count, by: 4) {
            let a = Int(rgba[i + 3])
            for k in 0..<3 { rgb.append(UInt8((Int(rgba[i + k]) * a + 255 * (255 - a) + 127) / 255)) }
        }
        let blurhash = BlurHash.encode(width: w, height: h, rgb: rgb, x: 4, y: 3)
        var json = #"{"source": {"width": \#(d.size.width), "height": \#(d.size.height), "format": "\#(d.format)", "#
        json += #""hasAlpha": \#(d.hasAlpha), "orientation": \#(facts.orientation), "frames": \#(facts.frames), "#
        json += #""pages": \#(facts.pages), "#
        if let video = facts.video {
            // A video's stream (SPEC: Video): seconds and frames a second, to the millisecond.
            json += #""duration": \#(NumberSyntax.text((video.duration * 1000).rounded() / 1000)), "#
            json +=
                #""codec": \#(quoted(video.codec)), "fps": \#(NumberSyntax.text((video.fps * 1000).rounded() / 1000)), "#
        }
        json += #""bytes": \#(d.bytes)}, "ratio": \#(Double(d.size.width) / Double(d.size.height)), "#
        json += #""thumbhash": "\#(thumbhash)", "blurhash": "\#(blurhash)", "#
        json += #""averageColor": \#(quoted(Colours.average(rgba: rgba))), "#
        json += #""dominantColor": \#(quoted(Colours.dominant(rgba: rgba)))"#
        if withOutput {
            // The same plan /thumb makes: its errors are /thumb's too.
            let order: RenderOrder
            do throws(AspectError) {
                order = try RenderOrder.plan(request, source: d, limits: limits, accept: accept)
            } catch {
                throw ServiceFailure(error, stage: "header")
            }
            json += #", "output": {"width": \#(order.plan.output.width), "height": \#(order.plan.output.height), "#
            json += #""format": "\#(order.format.rawValue)"}"#
        }
        json += "}\n"
        return Array(json.utf8)
    }

    static func quoted(_ s: String?) -> String { s.map { "\"\($0)\"" } ?? "null" }
}
