import Batch
import Configuration
import Core
import Foundation
import Glibc
import HTTP
import Remote
import Signing
import SourceStores
import Synchronization

/// `aspect warm [FILE|-] [flags]` (SPEC: Warming and batches): asks a running service (or,
/// `--offline`, the service's own handler in this process) for many results, so that
/// visitors find them cached.
enum WarmCommand {
    static let usage = """
        Usage: aspect warm [FILE|-] [--url BASE]… [--concurrency N] [--retries N] [--offline] [--accept A]
                           [--failed FILE] [--progress auto|bar|plain|none] [--json] [--config FILE]
               aspect warm --sources PATTERN [--preset NAME]… [--w 320,640,1280 --ratio 4:3 …] [flags]

        Each line of FILE (or standard input) is a request target (/thumb?…, /info?…, an imgproxy or
        thumbor path) or a whole URL; blank lines and # comments are skipped. --sources makes the
        requests instead: every file under images.root matching PATTERN (* within a folder, ** any
        folders) × each --preset × the product of the /thumb flags' comma lists, signed when
        security.signingKey is set. --url (default: the configured server.host and server.port)
        spreads the requests over one or more running services, at most --concurrency at once
        (default: the cores); 503 and 429 are asked again after Retry-After (--retries, default 5).
        --offline runs them through the service's handler in this process, into cache.dir. Requests
        carry --accept (default image/avif,image/webp,*/*, as browsers send): format=auto results are
        kept per what the client accepts, so warm again with --accept image/jpeg for older clients.
        Exit status: 0 every request answered 200 or 304, 1 any other (each in --failed FILE),
        2 bad arguments, 130 interrupted (after the summary).
        """

    static func run(_ args: [String]) -> Int32 {
        if args.contains("-h") || args.contains("--help") {
            print(usage)
            return 0
        }
        let parsed: BatchArguments
        let mode: BatchProgress.Mode
        do throws(ArgumentError) {
            parsed = try BatchArguments.parse(
                args,
                valued: [
                    "url", "concurrency", "retries", "failed", "progress", "sources", "preset", "config", "accept",
                ],
                alone: ["offline", "json"])
            mode = try parsed.progressMode()
        } catch {
            return fail(2, error.message + "\n\n" + usage)
        }
        let configArguments = parsed.value("config").map { ["--config", $0] } ?? []
        guard case .loaded(let config) = ConfigCommand.load(configArguments) else { return 2 }
        let lines: [String]
        do throws(ArgumentError) {
            lines = try requests(parsed, config)
        } catch {
            return fail(2, error.message)
        }
        let concurrency: Int
        let retries: Int
        do throws(ArgumentError) {
            concurrency = try parsed.count("concurrency", default: ProcessInfo.processInfo.activeProcessorCount)
            retries = try parsed.count("retries", default: 5, range: 0...100)
        } catch {
            return fail(2, error.message)
        }
        let progress = BatchProgress(
            label: "warm", total: lines.count, mode: mode, isTerminal: isatty(2) == 1,
            write: { Console.write(stderr: $0) })
        Interrupt.install()
        let ask: @Sendable (String) -> BatchProgress.Outcome
        let accept = parsed.value("accept") ?? "image/avif,image/webp,*/*"
        var offline: OfflineService?
        if parsed.switches.contains("offline") {
            guard let service = OfflineService(config, configArguments: configArguments, accept: accept) else {
                return 1
            }
            offline = service
            ask = { service.ask($0) }
        } else {
            let bases = (parsed.values["url"] ?? ["http://\(config.server.host):\(config.server.port)"]).map {
                $0.hasSuffix("/") ? String($0.dropLast()) : $0
            }
            let client = WarmClient(bases: bases, retries: retries, accept: accept, progress: progress)
            ask = { client.ask($0) }
        }
        runConcurrently(count: lines.count, threads: concurrency) { i in progress.record(ask(lines[i])) }
        offline?.finish()
        let summary = progress.finish(interrupted: Interrupt.isRequested)
        return conclude(summary, json: parsed.switches.contains("json"), failedFile: parsed.value("failed"))
    }

    /// The list's lines, or the requests `--sources` makes.
    static func requests(_ parsed: BatchArguments, _ config: Config) throws(ArgumentError) -> [String] {
        if let pattern = parsed.value("sources") {
            guard parsed.positional.isEmpty else { throw ArgumentError("give a list or --sources, not both") }
            guard case .folder(let root)? = try? SourceRoot(config.images.root) else {
                throw ArgumentError("--sources searches a folder; images.root is \(config.images.root)")
            }
            let sources = WarmRequests.sources(matching: pattern, under: root)
            guard !sources.isEmpty else { throw ArgumentError("--sources \(pattern) matches no file under \(root)") }
            let presets = parsed.values["preset"] ?? []
            guard !presets.isEmpty || !parsed.lists.isEmpty else {
                throw ArgumentError("--sources needs --preset NAME or /thumb flags (--w 320,640 …)")
            }
            let signer = config.signingEnabled ? Signer(key: config.security.signingKey) : nil
            return WarmRequests.queries(sources: sources, presets: presets, flags: parsed.lists).map { pairs in
                var q = pairs
                if let signer { q.append(("sig", signer.signature(QueryParameters(pairs: pairs)))) }
                return "/thumb?" + WarmRequests.query(q)
            }
        }
        guard parsed.positional.count <= 1 else {
            throw ArgumentError("give one list (a file, or - for standard input)")
        }
        guard parsed.lists.isEmpty, parsed.values["preset"] == nil else {
            throw ArgumentError("/thumb flags and --preset go with --sources")
        }
        let text: String
        if let file = parsed.positional.first, file != "-" {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ArgumentError("cannot read \(file)")
            }
            text = String(decoding: data, as: UTF8.self)
        } else {
            text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        }
        return WarmRequests.targets(fromList: text)
    }

    /// The summary's JSON, the failed list, and the exit status.
    static func conclude(_ summary: BatchProgress.Summary, json: Bool, failedFile: String?) -> Int32 {
        if json { print(summary.json) }
        if let failedFile {
            let text = summary.failures.map { "\($0.status) \($0.target)\n" }.joined()
            guard FileManager.default.createFile(atPath: failedFile, contents: Data(text.utf8)) else {
                Console.error("aspect: cannot write \(failedFile)")
                return 1
            }
        }
        if summary.interrupted { return 130 }
        return summary.failed > 0 ? 1 : 0
    }

    static func fail(_ status: Int32, _ message: String) -> Int32 {
        Console.error("aspect warm: \(message)")
        return status
    }
}

/// Asks running services over HTTP (the process's one libcurl client), spreading the
/// requests over the bases; a 503 or 429 is asked again after its Retry-After.
struct WarmClient: Sendable {
    let bases: [String]
    let retries: Int
    let accept: String
    let progress: BatchProgress
    let client = CurlClient.shared
    let counter = RoundRobin()

    final class RoundRobin: Sendable {
        let next = Atomic<Int>(0)
        func take(_ n: Int) -> Int { next.add(1, ordering: .relaxed).oldValue % n }
    }

    func ask(_ line: String) -> BatchProgress.Outcome {
        let url = WarmRequests.isURL(line) ? line : bases[counter.take(bases.count)] + line
        let limits = CurlClient.Limits(maxBytes: 1 << 40, connectTimeoutMs: 5000, timeoutMs: 120_000, caFile: "")
        guard let sink = FileHandle(forWritingAtPath: "/dev/null") else {
            return .failed(target: line, status: "error", error: "cannot open /dev/null")
        }
        defer { try? sink.close() }
        var attempt = 0
        while true {
            let t = client.download(url, headers: ["Accept: " + accept], into: sink.fileDescriptor, limits: limits)
            guard t.ok else { return .failed(target: line, status: "error", error: t.error) }
            if t.status == 503 || t.status == 429, attempt < retries, !Interrupt.isRequested {
                attempt += 1
                progress.retried()
                let wait = Double(t.retryAfter.trimmingCharacters(in: .whitespaces)) ?? 1
                Thread.sleep(forTimeInterval: min(max(wait, 0.05), 60))
                continue
            }
            switch t.status {
            case 200, 304: return t.xCache.uppercased().hasPrefix("HIT") ? .hit : .made
            default: return .failed(target: line, status: "\(t.status)", error: Self.message(t.body))
            }
        }
    }

    /// The `message` of Aspect's JSON error, else the body's first line.
    static func message(_ body: [UInt8]) -> String {
        if let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let error = object["error"] as? [String: Any], let message = error["message"] as? String
        {
            return message
        }
        return String(String(decoding: body.prefix(200), as: UTF8.self).prefix { $0 != "\n" })
    }
}
