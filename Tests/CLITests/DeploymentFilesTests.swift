import Foundation
import Testing

/// The deployment files hold configuration the binary must accept: the Dockerfile's ENV
/// and the Kubernetes ConfigMap, each checked by `aspect config` (exit 2 and the key
/// named if a value were wrong), and the cache's cap under its volume's size limit.
@Suite struct DeploymentFilesTests {
    static func text(_ path: String) throws -> String {
        try String(contentsOf: Binary.repositoryRoot.appendingPathComponent(path), encoding: .utf8)
    }

    /// The first two capture groups of each match of `pattern` in `text`, as name → value.
    static func variables(_ text: String, pattern: String) -> [String: String] {
        var out: [String: String] = [:]
        let regex = try? NSRegularExpression(pattern: pattern)
        let ns = text as NSString
        for m in regex?.matches(in: text, range: NSRange(location: 0, length: ns.length)) ?? [] {
            let value = ns.substring(with: m.range(at: 2)).trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
            out[ns.substring(with: m.range(at: 1))] = value
        }
        return out
    }

    static func config(_ env: [String: String]) throws -> [String: String] {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("aspect-deploy-\(UUID())")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let r = try Binary.run(["config"], env: env, cwd: empty)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stderr.contains("warning"), "\(r.stderr)")
        return Dictionary(
            r.stdout.split(separator: "\n").compactMap { line in
                line.firstIndex(of: "=").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) }
            }, uniquingKeysWith: { $1 })
    }

    @Test func theDockerfilesEnvironmentIsAValidConfiguration() throws {
        let env = Self.variables(try Self.text("Dockerfile"), pattern: #"(ASPECT_[A-Z_]+)=([^\s\\]+)"#)
        #expect(env.count == 4, "\(env)")
        let c = try Self.config(env)
        #expect(c["server.host"] == "0.0.0.0" && c["server.port"] == "8080")
        #expect(c["images.root"] == "/srv/aspect/images" && c["cache.dir"] == "/var/cache/aspect")
    }

    @Test func theKubernetesConfigMapIsAValidConfigurationUnderItsVolumesLimit() throws {
        let env = Self.variables(
            try Self.text("deploy/k8s/configmap.yaml"), pattern: #"\n\s+(ASPECT_[A-Z_]+): ([^\n]+)"#)
        #expect(env.count >= 8, "\(env)")
        let c = try Self.config(env)
        let maxBytes = try #require(c["cache.maxBytes"].flatMap { Int64($0) })
        // The Deployment's cache volume: an emptyDir whose sizeLimit is in Gi.
        let deployment = try Self.text("deploy/k8s/deployment.yaml")
        let sizes = Self.variables(
            deployment, pattern: #"- name: (cache)\s+emptyDir:\s+(?:#[^\n]*\s+)*sizeLimit: (\d+)Gi"#)
        let limit = try #require(sizes["cache"].flatMap { Int64($0) }, "no sizeLimit on the cache volume")
        // Downloaded sources live in the same volume, under cache.dir/sources.
        let sourceBytes = try #require(c["sources.cacheMaxBytes"].flatMap { Int64($0) })
        #expect(
            maxBytes + sourceBytes < limit << 30,
            "cache.maxBytes \(maxBytes) + sources.cacheMaxBytes \(sourceBytes) is not under the volume's \(limit)Gi")
        // Workers sized to the container's CPU limit (two per CPU), not left to count the
        // node's cores.
        let cpu = Self.variables(deployment, pattern: #"(limits): \{cpu: "(\d+)""#)["limits"].flatMap { Int($0) }
        #expect(cpu != nil && c["server.workers"] == cpu.map { String(2 * $0) }, "\(String(describing: cpu))")
        // The grace period covers the preStop pause and the drain.
        let drain = try #require(c["server.drainTimeoutMs"].flatMap { Int($0) })
        #expect(deployment.contains("terminationGracePeriodSeconds: 20") && 5 + drain / 1000 < 20)
    }
}
