import Configuration
import Core
import Foundation

/// Loading the configuration for `aspect config` and `aspect serve`.
enum ConfigCommand {
    /// `aspect config`: checks the configuration and prints each key's effective value.
    static func run(_ args: [String]) -> Int32 {
        switch load(args) {
        case .invalid: return 2
        case .help:
            print(Usage.serve)
            return 0
        case .loaded(let config):
            for (key, value) in config.rendered { print("\(key)=\(value)") }
            return 0
        }
    }

    enum Loaded {
        case loaded(Config)
        case help
        /// The problem is on stderr already.
        case invalid
    }

    /// The configuration from the arguments, environment and file, or help, or invalid
    /// (the problem said on stderr).
    static func load(_ args: [String]) -> Loaded {
        do {
            let parsed = try ServeArguments.parse(args)
            if parsed.help { return .help }
            let env = ProcessInfo.processInfo.environment
            let cwd = FileManager.default.currentDirectoryPath
            var sources = ConfigSources(environment: env, flags: parsed.overrides, workingDirectory: cwd)
            let explicit = parsed.configPath ?? env[Config.configFileEnvironmentName]
            let path = explicit ?? "config.json"
            if let data = FileManager.default.contents(atPath: path) {
                sources.filePath = path
                sources.fileContents = data
            } else if explicit != nil {
                throw ConfigError(key: path, message: "cannot be read: no such file, or no permission")
            }
            for name in Config.unknownEnvironment(env) {
                Console.error("aspect: warning: \(name) is not a configuration variable; ignored")
            }
            return .loaded(try Config.load(sources))
        } catch {
            Console.error("aspect: invalid configuration: \(error)")
            return .invalid
        }
    }
}
