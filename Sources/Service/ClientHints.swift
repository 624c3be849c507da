import Core
import HTTP

/// Client hints (SPEC: Efficiency, `http.clientHints`): the device pixel ratio and the
/// width a browser says it will show an image at, standing in for `dpr` and `w` when the
/// request does not give them. Explicit parameters win.
struct ClientHints: Sendable, Equatable {
    /// What every image answer asks for and varies on.
    static let acceptCH = "Sec-CH-DPR, Sec-CH-Width"
    static let vary = "Sec-CH-DPR, Sec-CH-Width, DPR, Width"

    var dpr: Double?
    /// Device pixels.
    var width: Int?

    init(_ headers: HTTPHeaders) {
        let dpr = headers["Sec-CH-DPR"] ?? headers["DPR"]
        let width = headers["Sec-CH-Width"] ?? headers["Width"]
        self.dpr = dpr.flatMap { NumberSyntax.decimal(Substring($0.trimmingCharacters(in: .whitespaces))) }
            .flatMap { $0 > 0 ? $0 : nil }
        self.width = width.flatMap { NumberSyntax.integer(Substring($0.trimmingCharacters(in: .whitespaces))) }
            .flatMap { $0 > 0 ? $0 : nil }
    }

    /// Part of what a request's key follows from: the hints as sent.
    var memo: String { "\u{0}dpr=\(dpr.map(NumberSyntax.text) ?? "")&width=\(width.map(String.init) ?? "")" }

    /// `request` with the hints where its parameters (`given`, after presets) leave them
    /// open: the DPR clamped to 1 … maxDpr, and the width in CSS pixels (device pixels
    /// over the DPR), within 1 … maxDimension.
    func apply(to request: ThumbRequest, given: Set<String>, limits: RequestLimits) -> ThumbRequest {
        var r = request
        if !given.contains("dpr"), let dpr { r.dpr = min(max(dpr, 1), limits.maxDpr) }
        if !given.contains("w"), !given.contains("h"), let width {
            let css = Int((Double(width) / r.dpr).rounded())
            r.width = min(max(css, 1), limits.maxDimension)
        }
        return r
    }
}
