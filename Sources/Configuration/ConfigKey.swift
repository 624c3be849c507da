import Core

/// One configuration key: its name, what it means, and how a value is checked and applied.
public struct ConfigKey: Sendable {
    /// The dotted name, as in `config.json` (`server.port`).
    public let name: String
    /// What the key does, for `--help` and docs/configuration.md's table.
    public let help: String
    /// Checks `value` and stores it; `nil` on success, else what is allowed.
    let apply: @Sendable (inout Config, ConfigValue, _ base: String) -> String?
    /// The current value, as text.
    let read: @Sendable (Config) -> String

    /// `ASPECT_` and the name upper-cased, `.` as `_`: `ASPECT_SERVER_PORT`.
    public var environmentName: String {
        "ASPECT_" + name.uppercased().replacingDots
    }

    /// Whether the key holds a path that is resolved against a base directory.
    public let isPath: Bool

    init(
        _ name: String, _ help: String, isPath: Bool = false,
        apply: @escaping @Sendable (inout Config, ConfigValue, String) -> String?,
        read: @escaping @Sendable (Config) -> String
    ) {
        self.name = name
        self.help = help
        self.isPath = isPath
        self.apply = apply
        self.read = read
    }
}

extension String {
    fileprivate var replacingDots: String { String(map { $0 == "." ? "_" : $0 }) }
}

extension ConfigKey {
    static func integer(
        _ name: String, _ range: ClosedRange<Int>, _ help: String, _ path: WritableKeyPath<Config, Int> & Sendable
    ) -> ConfigKey {
        ConfigKey(name, help) { c, v, _ in
            guard let i = v.integer(in: Int64(range.lowerBound)...Int64(range.upperBound)) else {
                return "must be an integer from \(range.lowerBound) to \(range.upperBound)"
            }
            c[keyPath: path] = Int(i)
            return nil
        } read: {
            "\($0[keyPath: path])"
        }
    }

    static func bytes(
        _ name: String, _ range: ClosedRange<Int64>, _ help: String, _ path: WritableKeyPath<Config, Int64> & Sendable
    ) -> ConfigKey {
        ConfigKey(name, help) { c, v, _ in
            guard let i = v.bytes(in: range) else {
                return
                    "must be a byte count from \(range.lowerBound) to \(range.upperBound): an integer, or digits with a unit (512MB, 1GiB)"
            }
            c[keyPath: path] = i
            return nil
        } read: {
            "\($0[keyPath: path])"
        }
    }

    static func decimal(
        _ name: String, _ range: ClosedRange<Double>, _ help: String, _ path: WritableKeyPath<Config, Double> & Sendable
    ) -> ConfigKey {
        ConfigKey(name, help) { c, v, _ in
            guard let d = v.decimal(in: range) else {
                return
                    "must be a number from \(NumberSyntax.text(range.lowerBound)) to \(NumberSyntax.text(range.upperBound))"
            }
            c[keyPath: path] = d
            return nil
        } read: {
            NumberSyntax.text($0[keyPath: path])
        }
    }

    static func boolean(_ name: String, _ help: String, _ path: WritableKeyPath<Config, Bool> & Sendable) -> ConfigKey {
        ConfigKey(name, help) { c, v, _ in
            switch v {
            case .bool(let b): c[keyPath: path] = b
            case .string("true"), .string("1"): c[keyPath: path] = true
            case .string("false"), .string("0"): c[keyPath: path] = false
            default: return "must be true or false"
            }
            return nil
        } read: {
            "\($0[keyPath: path])"
        }
    }

    static func string(
        _ name: String, _ help: String, allowEmpty: Bool, isPath: Bool = false,
        _ path: WritableKeyPath<Config, String> & Sendable
    ) -> ConfigKey {
        ConfigKey(name, help, isPath: isPath) { c, v, base in
            guard case .string(let s) = v, allowEmpty || !s.isEmpty, !s.utf8.contains(0) else {
                return allowEmpty ? "must be a string" : "must be a non-empty string"
            }
            c[keyPath: path] = isPath ? ConfigPaths.resolve(s, against: base) : s
            return nil
        } read: {
            $0[keyPath: path]
        }
    }

    /// A string shown only as `(set)` or empty: a credential.
    static func secret(_ name: String, _ help: String, _ path: WritableKeyPath<Config, String> & Sendable)
        -> ConfigKey
    {
        ConfigKey(name, help) { c, v, _ in
            guard case .string(let s) = v, !s.utf8.contains(0) else { return "must be a string" }
            c[keyPath: path] = s
            return nil
        } read: {
            $0[keyPath: path].isEmpty ? "" : "(set)"
        }
    }

    /// A JSON object of names to strings (in the file, or as its text in a variable or a
    /// flag): `values` and `value` name what the strings are, in its messages.
    static func stringMap(
        _ name: String, _ help: String, values: String, value: String,
        _ path: WritableKeyPath<Config, [String: String]> & Sendable
    ) -> ConfigKey {
        ConfigKey(name, help) { c, v, _ in
            guard let object = v.jsonObject else { return "must be a JSON object of preset names to \(values)" }
            var map: [String: String] = [:]
            for (key, entry) in object {
                guard case .string(let text) = entry else {
                    return "must map each name to \(value); '\(key)' is not a string"
                }
                map[key] = text
            }
            c[keyPath: path] = map
            return nil
        } read: {
            "{"
                + $0[keyPath: path].sorted { $0.key < $1.key }.map { "\"\($0.key)\": \"\($0.value)\"" }.joined(
                    separator: ", ") + "}"
        }
    }

    /// A secret written in hex (an even number of hex digits), never printed.
    static func hexSecret(_ name: String, _ help: String, _ path: WritableKeyPath<Config, String> & Sendable)
        -> ConfigKey
    {
        ConfigKey(name, help) { c, v, _ in
            guard case .string(let s) = v, s.utf8.count % 2 == 0, s.allSatisfy({ $0.isASCII && $0.isHexDigit })
            else { return "must be hex digits, an even number of them" }
            c[keyPath: path] = s
            return nil
        } read: {
            $0[keyPath: path].isEmpty ? "" : "(set)"
        }
    }

    static func choice<E: RawRepresentable & CaseIterable & Sendable>(
        _ name: String, _ help: String, _ path: WritableKeyPath<Config, E> & Sendable
    ) -> ConfigKey where E.RawValue == String {
        ConfigKey(name, help) { c, v, _ in
            guard case .string(let s) = v, let e = E(rawValue: s) else {
                return "must be one of \(E.allCases.map(\.rawValue).joined(separator: ", "))"
            }
            c[keyPath: path] = e
            return nil
        } read: {
            $0[keyPath: path].rawValue
        }
    }
}

/// Path arithmetic on strings, so Core needs no file system.
enum ConfigPaths {
    /// `path` if absolute, else `base/path`, with `.` segments and trailing `/` removed.
    static func resolve(_ path: String, against base: String) -> String {
        // An empty path is no path (an unset key), not the base folder.
        guard !path.isEmpty else { return "" }
        let joined = path.hasPrefix("/") || base.isEmpty ? path : base + "/" + path
        let absolute = joined.hasPrefix("/")
        let parts = joined.split(separator: "/").filter { $0 != "." }
        let body = parts.joined(separator: "/")
        return absolute ? "/" + body : (body.isEmpty ? "." : body)
    }

    /// The folder of a file path (`.` for a bare name).
    static func directory(of file: String) -> String {
        guard let slash = file.lastIndex(of: "/") else { return "." }
        let dir = file[..<slash]
        return dir.isEmpty ? "/" : String(dir)
    }
}
