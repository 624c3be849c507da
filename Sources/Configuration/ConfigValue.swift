import Core
import Foundation

/// A configuration value as it arrived: typed from JSON, or text from the environment
/// and flags. Conversions accept both, so `ASPECT_SERVER_PORT=9000` and `"port": 9000`
/// mean the same.
public enum ConfigValue: Equatable, Sendable, Decodable {
    case string(String)
    case integer(Int64)
    case number(Double)
    case bool(Bool)
    case object([String: ConfigValue])
    case array([ConfigValue])
    case other(String)

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? c.decode(Int64.self) {
            self = .integer(i)
        } else if let d = try? c.decode(Double.self) {
            self = .number(d)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let o = try? c.decode([String: ConfigValue].self) {
            self = .object(o)
        } else if let a = try? c.decode([ConfigValue].self) {
            self = .array(a)
        } else if c.decodeNil() {
            self = .other("null")
        } else {
            self = .other("an unsupported value")
        }
    }

    /// A JSON object: given as one in the file, or as its text in a variable or a flag.
    var jsonObject: [String: ConfigValue]? {
        switch self {
        case .object(let o): return o
        case .string(let text):
            guard let data = text.data(using: .utf8),
                let decoded = try? JSONDecoder().decode(ConfigValue.self, from: data), case .object(let o) = decoded
            else { return nil }
            return o
        default: return nil
        }
    }

    /// How the value reads in a message.
    var shown: String {
        switch self {
        case .string(let s): NumberSyntax.quote(s)
        case .integer(let i): "\(i)"
        case .number(let d): "\(d)"
        case .bool(let b): "\(b)"
        case .object: "an object"
        case .array(let a): "[" + a.map(\.shown).joined(separator: ", ") + "]"
        case .other(let s): s
        }
    }

    var text: String? {
        switch self {
        case .string(let s): s
        case .integer(let i): "\(i)"
        case .number(let d): NumberSyntax.text(d)
        case .bool(let b): "\(b)"
        case .object, .array, .other: nil
        }
    }

    func integer(in range: ClosedRange<Int64>) -> Int64? {
        let v: Int64?
        switch self {
        case .integer(let i): v = i
        case .string(let s): v = NumberSyntax.integer(Substring(s.trimmingSpaces)).map(Int64.init)
        default: v = nil
        }
        return v.flatMap { range.contains($0) ? $0 : nil }
    }

    func decimal(in range: ClosedRange<Double>) -> Double? {
        let v: Double?
        switch self {
        case .integer(let i): v = Double(i)
        case .number(let d): v = d
        case .string(let s): v = NumberSyntax.decimal(Substring(s.trimmingSpaces))
        default: v = nil
        }
        return v.flatMap { range.contains($0) ? $0 : nil }
    }

    /// A byte count: an integer, or digits with a unit (`512MB`, `1GiB`, `64k`).
    func bytes(in range: ClosedRange<Int64>) -> Int64? {
        if let i = integer(in: range) { return i }
        guard case .string(let raw) = self else { return nil }
        let s = raw.trimmingSpaces.lowercased()
        let digits = s.prefix { $0.isASCII && $0.isNumber }
        let unit = s.dropFirst(digits.count).trimmingSpaces
        let factors: [String: Int64] = [
            "": 1, "b": 1, "k": 1 << 10, "kb": 1000, "kib": 1 << 10, "m": 1 << 20, "mb": 1_000_000,
            "mib": 1 << 20, "g": 1 << 30, "gb": 1_000_000_000, "gib": 1 << 30, "t": 1 << 40,
            "tb": 1_000_000_000_000, "tib": 1 << 40,
        ]
        // Not NumberSyntax's: a URL's numbers are short, a disk's bytes need 13 digits and more.
        guard !digits.isEmpty, digits.count <= 18, let n = Int64(digits), let f = factors[String(unit)] else {
            return nil
        }
        let (product, overflow) = n.multipliedReportingOverflow(by: f)
        return !overflow && range.contains(product) ? product : nil
    }
}

extension StringProtocol {
    var trimmingSpaces: Substring {
        let s = Substring(self)
        let start = s.firstIndex { $0 != " " } ?? s.endIndex
        let end = s.lastIndex { $0 != " " }.map { s.index(after: $0) } ?? start
        return start < end ? s[start..<end] : s[start..<start]
    }
}

extension ConfigValue {
    /// A list of names: a JSON array of strings, or one string of names joined by commas
    /// (an environment variable's form); nil for anything else. A non-string item is "".
    var names: [String]? {
        switch self {
        case .string(let s): s.split(separator: ",").map { String($0.trimmingSpaces) }
        case .array(let a): a.map { if case .string(let s) = $0 { s } else { "" } }
        default: nil
        }
    }
}
