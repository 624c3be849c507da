import Foundation

/// Runs the built `aspect` executable, as a user would.
struct Binary {
    struct Result {
        /// The exit status, or the signal's number when `signaled`.
        let status: Int32
        var signaled = false
        let stdout: String
        let stderr: String
    }

    /// An executable of this package, built beside this test bundle.
    static func built(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    /// The repository's root (the folder of Package.swift).
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    static func run(_ args: [String], env: [String: String] = [:], cwd: URL? = nil, executable: String = "aspect")
        throws
        -> Result
    {
        let p = Process()
        p.executableURL = built(executable)
        p.arguments = args
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ASPECT_") }
        environment.merge(env) { $1 }
        p.environment = environment
        p.currentDirectoryURL = cwd ?? repositoryRoot
        // stdout through a pipe, read to its end; stderr into a file, read after the exit:
        // two pipes read one after the other would deadlock once the second filled up.
        let out = Pipe()
        let errPath = FileManager.default.temporaryDirectory.appendingPathComponent(
            "aspect-stderr-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: errPath.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        defer { try? FileManager.default.removeItem(at: errPath) }
        let err = try FileHandle(forWritingTo: errPath)
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        try err.close()
        let e = (try? Data(contentsOf: errPath)) ?? Data()
        return Result(
            status: p.terminationStatus, signaled: p.terminationReason == .uncaughtSignal,
            stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }
}
