import Foundation
import Testing

@testable import Configuration
@testable import Core

/// `aspect config` through the real binary: the file, the environment and flags.
@Suite struct ConfigCommandTests {
    func values(_ out: String) -> [String: String] {
        var d: [String: String] = [:]
        for line in out.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.count == 2 { d[String(parts[0])] = String(parts[1]) }
        }
        return d
    }

    @Test func embeddedDefaultIsTheBuiltInDefault() throws {
        let withFile = try Binary.run(["config"])
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("aspect-empty-\(getpid())")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let builtIn = try Binary.run(["config"], cwd: empty)
        #expect(withFile.status == 0 && builtIn.status == 0)
        var a = values(withFile.stdout)
        var b = values(builtIn.stdout)
        #expect(a.count == Config.keys.count)
        #expect(a["images.root"] == Binary.repositoryRoot.appendingPathComponent("samples").path)
        // The embedded default shows the demo page; built in, it is off.
        #expect(a["http.demoPage"] == "true" && b["http.demoPage"] == "false")
        // The embedded default names a preset for the demo page; built in, there is none.
        #expect(a["presets"]?.contains("avatar") == true && b["presets"] == "{}")
        for key in ["images.root", "cache.dir", "http.demoPage", "presets"] {
            a[key] = nil
            b[key] = nil
        }
        #expect(a == b, "config.json and the built-in defaults differ")
    }

    @Test func precedenceThroughTheBinary() throws {
        let r = try Binary.run(
            ["config", "--port", "9003", "--workers=2"],
            env: ["ASPECT_SERVER_PORT": "9002", "ASPECT_SERVER_QUEUEDEPTH": "5", "ASPECT_SERVER_WORKERS": "4"])
        #expect(r.status == 0)
        let v = values(r.stdout)
        #expect(v["server.port"] == "9003" && v["server.workers"] == "2" && v["server.queueDepth"] == "5")
        #expect(v["server.host"] == "127.0.0.1")
    }

    @Test func invalidConfigurationExitsTwoNamingTheKey() throws {
        let flag = try Binary.run(["config", "--port", "http"])
        #expect(flag.status == 2)
        #expect(flag.stderr.contains("server.port: must be an integer from 0 to 65535, got 'http'"))

        let env = try Binary.run(["config"], env: ["ASPECT_LOG_LEVEL": "loud"])
        #expect(env.status == 2 && env.stderr.contains("log.level") && env.stderr.contains("ASPECT_LOG_LEVEL"))

        let missing = try Binary.run(["config", "--config", "no-such.json"])
        #expect(missing.status == 2 && missing.stderr.contains("no-such.json"))

        let badFlag = try Binary.run(["serve", "--prot", "1"])
        #expect(badFlag.status == 2 && badFlag.stderr.contains("--prot"))
    }

    @Test func helpNamesEveryFlagAndVariable() throws {
        let r = try Binary.run(["serve", "--help"])
        #expect(r.status == 0)
        for word in [
            "--config", "--host", "--port", "--images", "--cache-dir", "--signing-key", "--workers",
            "ASPECT_LIMITS_MAXDIMENSION", "ASPECT_SECURITY_SIGNINGKEY",
        ] {
            #expect(r.stdout.contains(word), "\(word)")
        }
        #expect(try Binary.run(["--help"]).status == 0)
        #expect(try Binary.run(["frobnicate"]).status == 2)
    }
}
