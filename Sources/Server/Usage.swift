import Configuration
import Core

/// The help texts.
enum Usage {
    static let main = """
        aspect: a thumbnail HTTP service

        Usage:
          aspect serve [flags]    run the service (aspect serve --help for its flags)
          aspect thumb SRC OUT    make one thumbnail (aspect thumb --help for its flags)
          aspect thumb SRC… --out DIR  make a folder's thumbnails and a manifest (aspect thumb --out x --help)
          aspect warm [FILE|-]    fill the cache ahead of the visitors (aspect warm --help)
          aspect config [flags]   check the configuration and print every key's effective value
          aspect samples DIR      make the embedded default's sample images in DIR
          aspect sign URL         print URL signed with security.signingKey
          aspect healthcheck      exit 0 when the service the configuration names answers /healthz
          aspect --help           this text

        Configuration: config.json (or --config PATH, or ASPECT_CONFIG), then ASPECT_* environment
        variables, then flags. docs/configuration.md lists every key.
        """

    static var serve: String {
        var lines = [
            "Usage: aspect serve [flags]",
            "",
            "  --config PATH         the JSON config file (default: ./config.json if present)",
        ]
        for flag in ServeArguments.flags {
            let left = "\(flag.name) \(flag.valueName)"
            let help = Config.key(flag.key)?.help ?? ""
            lines.append("  \(left.padding(toLength: 20, withPad: " ", startingAt: 0))  \(help) (\(flag.key))")
        }
        lines += [
            "  -h, --help            this text",
            "",
            "Every key can also be set by its environment variable:",
        ]
        for key in Config.keys {
            lines.append("  \(key.environmentName.padding(toLength: 34, withPad: " ", startingAt: 0))  \(key.help)")
        }
        let aws = Config.S3.awsVariables.map { "\($0.variable) (\($0.key))" }.joined(separator: ", ")
        lines.append("\nBelow the config file, the s3 keys fall back to the AWS variables: \(aws).")
        lines.append("Precedence: flag, then environment, then the config file, then built-in defaults.")
        return lines.joined(separator: "\n")
    }
}
