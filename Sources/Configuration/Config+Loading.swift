import Core
import Foundation

/// Where configuration comes from, lowest precedence first: built-in defaults, the JSON
/// file, `ASPECT_*` environment variables, flags. Core reads no files: the caller passes
/// the file's bytes.
public struct ConfigSources: Sendable {
    /// The config file's path, as given (for messages, and as the base of its relative paths).
    public var filePath: String?
    /// The config file's contents.
    public var fileContents: Data?
    public var environment: [String: String]
    /// Values from flags, by key name (`server.port`).
    public var flags: [String: String]
    /// The base of relative paths given by default, environment or flag.
    public var workingDirectory: String

    public init(
        filePath: String? = nil, fileContents: Data? = nil, environment: [String: String] = [:],
        flags: [String: String] = [:], workingDirectory: String
    ) {
        self.filePath = filePath
        self.fileContents = fileContents
        self.environment = environment
        self.flags = flags
        self.workingDirectory = workingDirectory
    }
}

extension Config {
    /// The environment variable that names the config file when `--config` is not given.
    public static let configFileEnvironmentName = "ASPECT_CONFIG"

    /// Builds the configuration from its sources, flag > environment > file > default.
    /// Throws for the first invalid value, naming its key and where it came from.
    public static func load(_ sources: ConfigSources) throws(ConfigError) -> Config {
        var config = Config()
        let cwd = sources.workingDirectory
        config.images.root = ConfigPaths.resolve(config.images.root, against: cwd)
        config.cache.dir = ConfigPaths.resolve(config.cache.dir, against: cwd)
        // The AWS variables every S3 tool reads, under everything Aspect's own sources say.
        // imgproxy's own variables the same way, for a site that moves from it.
        for (name, variable) in (Config.S3.awsVariables + Config.Imgproxy.variables + Config.Thumbor.variables)
            .reversed()
        {
            guard let text = sources.environment[variable], !text.isEmpty, let key = key(name) else { continue }
            try apply(key, .string(text), base: cwd, origin: "from \(variable)", to: &config)
        }

        if let data = sources.fileContents {
            let path = sources.filePath ?? "the config file"
            let base = ConfigPaths.directory(of: ConfigPaths.resolve(path, against: cwd))
            for (name, value) in try fileValues(data, path: path) {
                guard let key = key(name) else {
                    let known = keys.map(\.name).joined(separator: ", ")
                    throw ConfigError(
                        key: name, message: "is not a configuration key (in \(path)); the keys are \(known)")
                }
                try apply(key, value, base: base, origin: "in \(path)", to: &config)
            }
        }
        for key in keys {
            if let text = sources.environment[key.environmentName] {
                try apply(key, .string(text), base: cwd, origin: "from \(key.environmentName)", to: &config)
            }
        }
        for (name, text) in sources.flags.sorted(by: { $0.key < $1.key }) {
            guard let key = key(name) else {
                throw ConfigError(key: name, message: "is not a configuration key")
            }
            try apply(key, .string(text), base: cwd, origin: "from its flag", to: &config)
        }
        guard config.output.autoQualityMin <= config.output.autoQualityMax else {
            throw ConfigError(key: "output.autoQualityMin", message: "must be at most output.autoQualityMax")
        }
        // imgproxy signs with both or neither: a key alone would leave URLs unchecked.
        if config.imgproxy.key.isEmpty != config.imgproxy.salt.isEmpty {
            throw ConfigError(
                key: config.imgproxy.key.isEmpty ? "imgproxy.key" : "imgproxy.salt",
                message:
                    "must be set with \(config.imgproxy.key.isEmpty ? "imgproxy.salt" : "imgproxy.key"): imgproxy signs with both"
            )
        }
        // Each preset checked as a request would be: a bad one stops start-up, named.
        try config.setPresets(config.presets)
        return config
    }

    /// `ASPECT_*` variables that name no key (likely typos), for a warning at start-up.
    public static func unknownEnvironment(_ environment: [String: String]) -> [String] {
        let known = Set(keys.map(\.environmentName) + [configFileEnvironmentName])
        return environment.keys.filter { $0.hasPrefix("ASPECT_") && !known.contains($0) }.sorted()
    }

    private static func apply(
        _ key: ConfigKey, _ value: ConfigValue, base: String, origin: String, to config: inout Config
    ) throws(ConfigError) {
        if let allowed = key.apply(&config, value, base) {
            throw ConfigError(key: key.name, message: "\(allowed), got \(value.shown) (\(origin))")
        }
    }

    /// The file's values as dotted names: nested objects (`{"server": {"port": 1}}`) and
    /// dotted names (`{"server.port": 1}`) both work.
    static func fileValues(_ data: Data, path: String) throws(ConfigError) -> [(String, ConfigValue)] {
        let root: ConfigValue
        do {
            root = try JSONDecoder().decode(ConfigValue.self, from: data)
        } catch {
            throw ConfigError(key: path, message: "is not valid JSON: \(error)")
        }
        guard case .object(let top) = root else {
            throw ConfigError(key: path, message: "must hold a JSON object of configuration keys")
        }
        var out: [(String, ConfigValue)] = []
        func flatten(_ object: [String: ConfigValue], prefix: String) {
            for (name, value) in object.sorted(by: { $0.key < $1.key }) {
                let full = prefix.isEmpty ? name : prefix + "." + name
                if case .object(let inner) = value, key(full) == nil {
                    flatten(inner, prefix: full)
                } else {
                    out.append((full, value))
                }
            }
        }
        flatten(top, prefix: "")
        return out
    }
}
