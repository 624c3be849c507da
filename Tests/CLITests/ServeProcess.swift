import Foundation
import TestSupport

/// `aspect serve` as a subprocess on a free port, in a folder of its own.
final class ServeProcess {
    let process = Process()
    let port: Int
    let dir: URL
    private let stderrPipe = Pipe()
    private let stdoutPipe = Pipe()

    /// Starts the binary in `dir` (created if missing) with `env` and `args`, and waits for
    /// the line saying where it listens.
    /// `fileLimit`: started under `ulimit -n` of that many descriptors (soft and hard).
    /// `prelude`: shell commands run in `dir` first; with `ownMounts`, in a mount namespace
    /// of the server's own (unshare), where the prelude may mount a filesystem.
    init(
        dir: URL, env: [String: String] = [:], args: [String] = [], fileLimit: Int? = nil, prelude: String? = nil,
        ownMounts: Bool = false
    ) throws {
        self.dir = dir
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        if fileLimit != nil || prelude != nil {
            // exec: the shell becomes the server, so the pid is the server's.
            let steps = [fileLimit.map { "ulimit -n \($0)" }, prelude].compactMap { $0 }.joined(separator: " && ")
            let shell = ["/bin/sh", "-c", steps + " && exec \"$0\" \"$@\"", Binary.built("aspect").path]
            let command = (ownMounts ? ["/usr/bin/unshare", "--user", "--map-root-user", "--mount"] : []) + shell
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst()) + ["serve", "--port", "0"] + args
        } else {
            process.executableURL = Binary.built("aspect")
            process.arguments = ["serve", "--port", "0"] + args
        }
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ASPECT_") }
        environment.merge(env) { $1 }
        process.environment = environment
        process.currentDirectoryURL = dir
        process.standardError = stderrPipe
        process.standardOutput = stdoutPipe
        try process.run()
        var seen = ""
        let handle = stderrPipe.fileHandleForReading
        let deadline = Date().addingTimeInterval(20)
        var found: Int?
        while found == nil, Date() < deadline {
            // (the warning about an unusable cache, if any, comes before this line)
            let data = handle.availableData
            if data.isEmpty { break }
            seen += String(decoding: data, as: UTF8.self)
            if let r = seen.range(of: #"listening on http://[^:]+:(\d+)"#, options: .regularExpression) {
                found = Int(seen[r].split(separator: ":").last ?? "")
            }
        }
        guard let found else {
            kill(process.processIdentifier, SIGKILL)
            throw TestError("aspect serve did not start: \(seen)")
        }
        port = found
        startup = seen
    }

    func signal(_ sig: Int32) { kill(process.processIdentifier, sig) }

    /// What the server wrote to stderr before it listened.
    private(set) var startup = ""

    /// Everything the server wrote to stderr (the event log), once it has exited.
    var errors: String {
        startup + String(decoding: stderrPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    /// What the server wrote to stdout (the access log), once it has exited.
    var output: String {
        String(decoding: stdoutPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    /// Waits for the exit; its status, or nil if it did not exit within `seconds`.
    func wait(seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        return process.isRunning ? nil : process.terminationStatus
    }

    deinit {
        // SIGKILL: a test that failed must not leave a server behind, whatever its state.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

extension ServeProcess {
    /// A new temporary folder, `aspect-LABEL-…`, whose `images/` holds the sample images
    /// (`aspect samples`): what most suites serve.
    static func sampleFolder(_ label: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aspect-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let made = try Binary.run(["samples", dir.appendingPathComponent("images").path])
        guard made.status == 0 else { throw TestError("aspect samples failed: \(made.stderr)") }
        return dir
    }

    /// `aspect serve` in `dir` on its `images/`, the cache in `cache/`, without the access
    /// log; `env` adds to that and wins.
    convenience init(samples dir: URL, env: [String: String] = [:], args: [String] = [], fileLimit: Int? = nil)
        throws
    {
        try self.init(
            dir: dir,
            env: ["ASPECT_IMAGES_ROOT": "images", "ASPECT_CACHE_DIR": "cache", "ASPECT_LOG_ACCESS": "false"].merging(
                env
            ) { $1 }, args: args, fileLimit: fileLimit)
    }
}
