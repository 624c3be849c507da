import Core

/// The arguments of `aspect serve`: the config file and the flags that override keys.
public struct ServeArguments: Equatable, Sendable {
    /// A flag of `aspect serve` and the key it sets.
    public struct Flag: Sendable {
        public let name: String
        public let key: String
        public let valueName: String
    }

    /// The flags that override keys (SPEC's common ones).
    public static let flags: [Flag] = [
        Flag(name: "--host", key: "server.host", valueName: "ADDR"),
        Flag(name: "--port", key: "server.port", valueName: "N"),
        Flag(name: "--images", key: "images.root", valueName: "DIR"),
        Flag(name: "--cache-dir", key: "cache.dir", valueName: "DIR"),
        Flag(name: "--signing-key", key: "security.signingKey", valueName: "KEY"),
        Flag(name: "--workers", key: "server.workers", valueName: "N"),
    ]

    public var configPath: String?
    /// Values by key name.
    public var overrides: [String: String] = [:]
    public var help = false

    public init(configPath: String? = nil, overrides: [String: String] = [:], help: Bool = false) {
        self.configPath = configPath
        self.overrides = overrides
        self.help = help
    }

    /// Parses `--flag VALUE` and `--flag=VALUE`; `-h`/`--help`.
    public static func parse(_ args: [String]) throws(ConfigError) -> ServeArguments {
        var result = ServeArguments()
        var i = 0
        while i < args.count {
            let arg = args[i]
            i += 1
            if arg == "-h" || arg == "--help" {
                result.help = true
                continue
            }
            let (name, inline): (String, String?) =
                if let eq = arg.firstIndex(of: "="), arg.hasPrefix("--") {
                    (String(arg[..<eq]), String(arg[arg.index(after: eq)...]))
                } else {
                    (arg, nil)
                }
            guard name == "--config" || flags.contains(where: { $0.name == name }) else {
                throw ConfigError(key: arg, message: "is not a flag of aspect serve; see aspect serve --help")
            }
            let value: String
            if let inline {
                value = inline
            } else {
                guard i < args.count else { throw ConfigError(key: name, message: "needs a value") }
                value = args[i]
                i += 1
            }
            if name == "--config" {
                result.configPath = value
            } else if let flag = flags.first(where: { $0.name == name }) {
                result.overrides[flag.key] = value
            }
        }
        return result
    }
}
