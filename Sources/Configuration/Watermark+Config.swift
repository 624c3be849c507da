import Core

extension Watermark {
    struct Refusal: Error {
        var message: String
    }

    /// One entry of `watermarks`: `src` required, the rest in range or absent (SPEC: Watermarks).
    static func configured(_ value: ConfigValue) -> Result<Watermark, Refusal> {
        guard case .object(let fields) = value else {
            return .failure(Refusal(message: "must be an object with src, and position, opacity, scale, margin"))
        }
        let known = ["src", "position", "opacity", "scale", "margin"]
        if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
            return .failure(Refusal(message: "has '\(unknown)'; a watermark takes \(known.joined(separator: ", "))"))
        }
        guard case .string(let src)? = fields["src"], !src.isEmpty else {
            return .failure(Refusal(message: "needs src, the path of its image under images.root"))
        }
        do throws(AspectError) {
            try ThumbRequest.checkSourcePath(src)
        } catch {
            return .failure(Refusal(message: error.message))
        }
        var mark = Watermark(src: src)
        if let v = fields["position"] {
            guard let text = v.text, let g = Gravity(rawValue: text), g.isCompass else {
                return .failure(
                    Refusal(
                        message: "position must be center or a compass gravity (north … southwest), got \(v.shown)"))
            }
            mark.position = g
        }
        for (name, range) in [("opacity", 0.0...1.0), ("scale", 0.0...1.0)] {
            guard let v = fields[name] else { continue }
            guard let x = v.decimal(in: range), name == "opacity" || x > 0 else {
                return .failure(Refusal(message: "\(name) must be a decimal above 0 and at most 1, got \(v.shown)"))
            }
            if name == "opacity" { mark.opacity = x } else { mark.scale = x }
        }
        if let v = fields["margin"] {
            guard let m = v.integer(in: 0...10_000) else {
                return .failure(
                    Refusal(message: "margin must be an integer from 0 to 10000 (CSS pixels), got \(v.shown)"))
            }
            mark.margin = Int(m)
        }
        return .success(mark)
    }

    /// The entry as JSON, for `aspect config`.
    var configText: String {
        "{\"src\": \"\(src)\", \"position\": \"\(position.rawValue)\", \"opacity\": "
            + "\(NumberSyntax.text(opacity)), \"scale\": \(NumberSyntax.text(scale)), \"margin\": \(margin)}"
    }
}
