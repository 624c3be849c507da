import Core
import Foundation

/// `aspect`: the entry point. Each subcommand returns its exit status.
let arguments = Array(CommandLine.arguments.dropFirst())
let status: Int32
switch arguments.first {
case nil, "-h", "--help", "help":
    print(Usage.main)
    status = arguments.isEmpty ? 2 : 0
case "config":
    status = ConfigCommand.run(Array(arguments.dropFirst()))
case "thumb":
    status = ThumbCommand.run(Array(arguments.dropFirst()))
case "warm":
    status = WarmCommand.run(Array(arguments.dropFirst()))
case "sign":
    status = SignCommand.run(Array(arguments.dropFirst()))
case "samples":
    status = SampleImages.run(Array(arguments.dropFirst()))
case "healthcheck":
    status = HealthcheckCommand.run(Array(arguments.dropFirst()))
case "serve":
    status = ServeCommand.run(Array(arguments.dropFirst()))
case "render-worker":
    // Started by `aspect serve` (SPEC: Isolation), not by people: not in the usage.
    status = RenderWorkerCommand.run(Array(arguments.dropFirst()))
case "sandbox-check":
    // What the render workers' sandbox refuses, for the tests.
    status = SandboxCheck.check(Array(arguments.dropFirst()))
case let other?:
    Console.error("aspect: unknown command '\(other)'\n\n\(Usage.main)")
    status = 2
}
exit(status)
