import Foundation
import Glibc
import TestSupport

/// moto's S3 server on a loopback port, with authentication on: requests must carry a
/// valid AWS Signature V4 of the account `Tests/Helpers/moto-s3.py setup` made. It runs from the
/// venv `scripts/test.sh` makes (`.build/test-venv`, or `ASPECT_TEST_VENV`), and stops
/// with the test process (a shell beside it watches the parent).
final class MotoServer: Sendable {
    let port: Int
    let bucket = "aspect-test"
    let accessKeyId: String
    let secretAccessKey: String
    /// moto's request log: one line per request, its target as received.
    let log: URL
    private let python: String

    var endpoint: String { "http://127.0.0.1:\(port)" }

    /// What `aspect serve` needs to reach this server: its endpoint, path-style, its keys.
    var clientEnvironment: [String: String] {
        [
            "ASPECT_S3_ENDPOINT": endpoint, "ASPECT_S3_PATHSTYLE": "true",
            "AWS_ACCESS_KEY_ID": accessKeyId, "AWS_SECRET_ACCESS_KEY": secretAccessKey,
        ]
    }

    /// One for the whole test run; nil with the reason when it cannot start.
    static let shared: Result<MotoServer, TestError> = {
        do {
            return .success(try MotoServer())
        } catch let e as TestError {
            return .failure(e)
        } catch {
            return .failure(TestError("\(error)"))
        }
    }()

    static var venv: String {
        ProcessInfo.processInfo.environment["ASPECT_TEST_VENV"]
            ?? Binary.repositoryRoot.appendingPathComponent(".build/test-venv").path
    }

    private init() throws {
        let bin = "\(Self.venv)/bin"
        guard FileManager.default.isExecutableFile(atPath: "\(bin)/moto_server") else {
            throw TestError("no moto_server in \(bin): run the tests with scripts/test.sh, which makes that venv")
        }
        python = "\(bin)/python"
        port = Self.freePort()
        log = FileManager.default.temporaryDirectory.appendingPathComponent("aspect-moto-\(UUID().uuidString).log")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        // moto checks signatures once its first three requests (the account's set-up) are spent.
        // It inherits the test process's blocked SIGTERM (the in-process servers take their
        // signals by signalfd): the watcher ends it with SIGKILL once the test process is gone.
        p.arguments = [
            "-c",
            "INITIAL_NO_AUTH_ACTION_COUNT=3 \"$0\" -H 127.0.0.1 -p \"$1\" >\"$2\" 2>&1 & "
                + "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; kill -9 $!",
            "\(bin)/moto_server", "\(port)", log.path,
        ]
        // Not the test process's stdout: the runner waits for it to close before it ends.
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        let deadline = Date().addingTimeInterval(30)
        while (try? TestClient(port: port)) == nil {
            guard Date() < deadline else { throw TestError("moto_server did not start: \(Self.read(log))") }
            usleep(100_000)
        }
        let setup = try Self.run(python, ["Tests/Helpers/moto-s3.py", "setup", "http://127.0.0.1:\(port)", bucket])
        struct Keys: Decodable {
            let accessKeyId: String
            let secretAccessKey: String
        }
        let keys = try JSONDecoder().decode(Keys.self, from: Data(setup.utf8))
        accessKeyId = keys.accessKeyId
        secretAccessKey = keys.secretAccessKey
    }

    /// Stores `bytes` as `key`, replacing what was there (a new ETag).
    func put(_ key: String, _ bytes: [UInt8]) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("aspect-put-\(UUID().uuidString)")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        _ = try Self.run(
            python, ["Tests/Helpers/moto-s3.py", "put", endpoint, bucket, key, file.path, accessKeyId, secretAccessKey])
    }

    static func read(_ url: URL) -> String { (try? String(contentsOf: url, encoding: .utf8)) ?? "" }

    private static func run(_ executable: String, _ args: [String]) throws -> String {
        let r = Process()
        r.executableURL = URL(fileURLWithPath: executable)
        r.arguments = args
        r.currentDirectoryURL = Binary.repositoryRoot
        let out = Pipe()
        r.standardOutput = out
        try r.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        r.waitUntilExit()
        guard r.terminationStatus == 0 else { throw TestError("\(args.prefix(2)) exited \(r.terminationStatus)") }
        return String(decoding: data, as: UTF8.self)
    }

    /// A port the kernel picked, free a moment ago.
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, len)
                return getsockname(fd, $0, &len)
            }
        }
        return Int(UInt16(bigEndian: addr.sin_port))
    }
}
