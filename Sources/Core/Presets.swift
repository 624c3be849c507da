/// Named parameter sets (SPEC: Presets): `{"avatar": "w=64&h=64&mode=fill&shape=circle"}`.
/// `preset=avatar` expands to those parameters; a parameter the request gives as well
/// overrides the preset's. With `onlyPresets`, a request may carry only `src`, `preset`,
/// `dpr`, `format` and `sig`.
public struct Presets: Equatable, Sendable {
    /// Each preset's parameters, decoded, by name.
    public private(set) var byName: [String: QueryParameters] = [:]
    /// As configured, for `aspect config`.
    public private(set) var source: [String: String] = [:]

    public init() {}

    /// What a request may carry besides them when only presets are served.
    public static let allowedWithOnlyPresets: Set<String> = ["src", "preset", "dpr", "format", "sig", "sheet"]

    /// The presets of `config`, each checked as a request would be (on a stand-in `src`):
    /// the error names the preset and what is wrong with it.
    public init(_ texts: [String: String], limits: RequestLimits) throws(ConfigError) {
        for (name, text) in texts.sorted(by: { $0.key < $1.key }) {
            func bad(_ why: String) -> ConfigError { ConfigError(key: "presets", message: "preset '\(name)' \(why)") }
            guard !name.isEmpty, name.utf8.allSatisfy({ Presets.isNameByte($0) }) else {
                throw bad("has a name that is not letters, digits, '-' and '_'")
            }
            let params: QueryParameters
            do throws(AspectError) {
                params = try QueryParameters.decode(text)
                for p in params.pairs where ["src", "sig", "preset"].contains(p.name) {
                    throw AspectError(.badParam, "may not set \(p.name)")
                }
                _ = try ThumbRequest.parse(
                    QueryParameters(pairs: [("src", "preset-check.jpg")] + params.pairs), limits: limits)
            } catch {
                throw bad("is not a valid request: \(error.message)")
            }
            byName[name] = params
            source[name] = text
        }
    }

    static func isNameByte(_ b: UInt8) -> Bool {
        (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || b == 0x2D || b == 0x5F
    }

    /// The request's parameters with `preset=NAME` replaced by the preset's, the request's
    /// own winning; refused when only presets are served and it asks for more.
    public func expand(_ params: QueryParameters, onlyPresets: Bool) throws(AspectError) -> QueryParameters {
        if onlyPresets {
            for p in params.pairs where !Presets.allowedWithOnlyPresets.contains(p.name) {
                throw .badParam(
                    "\(p.name) is not allowed: this server serves presets only; give preset= with src, and dpr or "
                        + "format if needed (presets: \(names))")
            }
            guard params.pairs.contains(where: { $0.name == "preset" }) else {
                throw .badParam("preset is required: this server serves presets only (presets: \(names))")
            }
        }
        let named = params.pairs.filter { $0.name == "preset" }
        guard let first = named.first else { return params }
        guard named.count == 1 else { throw .badParam("preset is given more than once; give it once") }
        guard let preset = byName[first.value] else {
            throw .badParam("preset '\(first.value)' is not configured; the presets are \(names)")
        }
        let own = params.pairs.filter { $0.name != "preset" }
        let given = Set(own.map(\.name))
        return QueryParameters(pairs: preset.pairs.filter { !given.contains($0.name) } + own)
    }

    /// The names, sorted, for messages.
    public var names: String { byName.isEmpty ? "none" : byName.keys.sorted().joined(separator: ", ") }
}
