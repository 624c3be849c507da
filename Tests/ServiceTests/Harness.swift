import Configuration
import Core
import Foundation
import HTTP
import Service
import Signing
import Stores
import Synchronization
import Syscalls

/// The service in process, its three parts simple ones at the protocol seams: sources as
/// small text files in a temporary folder, results in another, and a renderer that plans
/// with the service's own planner and writes what it would make instead of pixels. The
/// real stores and libvips have their own tests; these test the flow.
struct Harness {
    let sources: TextSources
    let results: FolderResults
    let renderer: ScriptRenderer
    let handler: ServiceHandler

    /// A new service on new stores holding `landscape.jpg` and `logo.png`; with
    /// `signingKey`, one that checks `sig`.
    init(signingKey: String? = nil, _ configure: (inout Config) throws -> Void = { _ in }) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aspect-service-\(UUID().uuidString)")
        let sources = try TextSources(dir: dir.appendingPathComponent("sources").path)
        try sources.put("landscape.jpg", "2400x1600 jpeg")
        try sources.put("logo.png", "800x800 png alpha")
        try self.init(
            sources: sources, results: try FolderResults(dir: dir.appendingPathComponent("results").path),
            renderer: ScriptRenderer(), signingKey: signingKey, configure)
    }

    /// A second service on the same sources and results (a restart with another
    /// configuration, say).
    init(sharingStoresOf other: Harness, _ configure: (inout Config) throws -> Void) throws {
        try self.init(
            sources: other.sources, results: other.results, renderer: other.renderer, signingKey: nil, configure)
    }

    private init(
        sources: TextSources, results: FolderResults, renderer: ScriptRenderer, signingKey: String?,
        _ configure: (inout Config) throws -> Void
    ) throws {
        var config = Config()
        try configure(&config)
        if let signingKey { config.security.signingKey = signingKey }
        self.sources = sources
        self.results = results
        self.renderer = renderer
        handler = ServiceHandler(
            config: config, sources: sources, results: results, renderer: renderer,
            signer: signingKey.map { Signer(key: $0) })
    }

    /// What a client gets for `target`: routed as the server would, deferred and pooled
    /// work run on threads of their own, the body read whole.
    func get(_ target: String, headers: [(String, String)] = [], method: String = "GET") -> Answer {
        let responder = CapturingResponder()
        send(target, headers: headers, method: method, to: responder)
        return Answer(responder.wait())
    }

    /// Routes `target` and starts what the route says, answering `responder`; returns at once.
    func send(
        _ target: String, headers: [(String, String)] = [], method: String = "GET", to responder: CapturingResponder
    ) {
        let (path, query) =
            target.firstIndex(of: "?").map { (String(target[..<$0]), String(target[target.index(after: $0)...])) }
            ?? (target, "")
        let head = HTTPRequestHead(
            method: method, target: target, path: path, query: query, minorVersion: 1,
            headers: HTTPHeaders(headers.map { (name: $0.0, value: $0.1) }), keepAlive: true)
        switch handler.route(head, context: RequestContext(draining: false, server: NoServer())) {
        case .respond(let r): responder.respond(r)
        case .work(let job): responder.work(job)
        case .deferred(let start): start(responder)
        }
    }
}

/// A response with its body read.
struct Answer {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }

    init(_ r: HTTPResponse) {
        status = r.status
        headers = r.headers
        switch r.body {
        case .bytes(let b): body = b
        case .file(let file, let offset, let length):
            body = Array((file.read(count: Int(offset + length)) ?? []).dropFirst(Int(offset)))
        }
    }
}

/// No server behind the handler: its figures are zero.
struct NoServer: ServerFigures {
    var snapshot: ServerSnapshot { ServerSnapshot() }
}

/// Takes the one answer, from whichever thread gives it; `work` runs on a thread. `gone`
/// plays a client that has hung up.
final class CapturingResponder: Responder, @unchecked Sendable {
    /// `@unchecked Sendable`: `answer` is guarded by `done`'s lock.
    private let done = NSCondition()
    private var answer: HTTPResponse?
    let gone = Atomic<Bool>(false)

    func respond(_ response: HTTPResponse) {
        done.lock()
        answer = response
        done.broadcast()
        done.unlock()
    }

    func work(_ job: @escaping @Sendable () -> HTTPResponse) {
        Thread { self.respond(job()) }.start()
    }

    var clientGone: Bool { gone.load(ordering: .relaxed) }

    func wait() -> HTTPResponse {
        done.lock()
        defer { done.unlock() }
        let deadline = Date().addingTimeInterval(30)
        while answer == nil, done.wait(until: deadline) {}
        return answer ?? HTTPResponse.text(599, "no answer")
    }
}

/// Sources as text files, "W×H format [alpha]": what the renderer reads back. Each `put`
/// is a new version. With `remote`, a source is known only once fetched (as an origin's
/// is): `resolve` says `needsFetch` until then, and `fetch` waits while `gate` is held.
final class TextSources: SourceStore {
    let dir: String
    private let versions = Mutex<[String: Int]>([:])
    let remote = Atomic<Bool>(false)
    private let fetched = Mutex<Set<String>>([])
    let fetches = Atomic<Int>(0)
    /// Held by a test to keep fetches waiting; a fetch passes once it is released.
    let gate = NSLock()

    init(dir: String) throws {
        self.dir = dir
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    func put(_ src: String, _ text: String) throws {
        let n = versions.withLock { v -> Int in
            v[src, default: 0] += 1
            return v[src] ?? 0
        }
        try Data(text.utf8).write(to: URL(fileURLWithPath: "\(dir)/\(src).v\(n)"))
    }

    var name: String { dir }

    func resolve(_ src: String) -> SourceResolution {
        if remote.load(ordering: .relaxed), !fetched.withLock({ $0.contains(src) }) { return .needsFetch }
        return known(src)
    }

    private func known(_ src: String) -> SourceResolution {
        guard let n = versions.withLock({ $0[src] }) else {
            return .failed(ServiceFailure(AspectError(.notFound, "no such source image: \(src)"), stage: "open"))
        }
        return .ready(SourceIdentity(path: src, version: "v\(n)", location: "\(dir)/\(src).v\(n)"))
    }

    func isCurrent(_ known: SourceIdentity) -> Bool {
        versions.withLock { $0[known.path] }.map { "v\($0)" } == known.version
    }

    func fetch(_ src: String) -> Result<SourceIdentity, ServiceFailure> {
        fetches.add(1, ordering: .relaxed)
        gate.lock()
        gate.unlock()
        fetched.withLock { _ = $0.insert(src) }
        return switch known(src) {
        case .ready(let i), .stale(let i): .success(i)
        case .failed(let f): .failure(f)
        case .needsFetch: .failure(ServiceFailure(AspectError(.internalError, "needs a fetch"), stage: "fetch"))
        }
    }

    func open(_ identity: SourceIdentity) -> Result<OpenFile, ServiceFailure> {
        OpenFile.open(identity.location).mapError {
            ServiceFailure(AspectError(.notFound, "gone"), stage: "open", detail: "\($0)")
        }
    }

    func readinessProblem() -> String? { nil }
    var cacheProblem: String? { nil }
    /// A fetching store reports fetch figures (and /metrics then shows the fetch series).
    var fetchFigures: FetchFigures? { remote.load(ordering: .relaxed) ? FetchFigures() : nil }
}

/// Results as files in a folder, by key, opened on each hit.
final class FolderResults: ResultStore {
    let dir: String
    private let kinds = Mutex<[String: String]>([:])
    let kept = Atomic<Int>(0)

    init(dir: String) throws {
        self.dir = dir
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    func result(_ key: String) -> StoredResult? {
        guard let kind = kinds.withLock({ $0[key] }), let (file, size) = OpenFile.open("\(dir)/\(key)", keepingUpTo: 0)
        else { return nil }
        return StoredResult(kind: kind, size: size, body: file)
    }

    private let bySource = Mutex<[String: Set<String>]>([:])

    func purge(source: String) -> Set<String> {
        let keys = bySource.withLock { $0.removeValue(forKey: source) ?? [] }
        return kinds.withLock { k in keys.filter { k.removeValue(forKey: $0) != nil } }
    }

    func keep(_ key: String, _ bytes: [UInt8], kind: String, source: String) -> Bool {
        bySource.withLock { _ = $0[source, default: []].insert(key) }
        guard (try? Data(bytes).write(to: URL(fileURLWithPath: "\(dir)/\(key)"), options: .atomic)) != nil else {
            return false
        }
        kinds.withLock { $0[key] = kind }
        kept.add(1, ordering: .relaxed)
        return true
    }

    var entries: Int { kinds.withLock { $0.count } }
    var problem: String? { nil }
    var figures: (bytes: Int64, entries: Int, evictions: Int) { (0, entries, 0) }
}

/// Reads a text source, asks the service's planner what to make, and writes that down:
/// "WxH format" and the quality. Counts its renders and descriptions.
final class ScriptRenderer: Renderer {
    let renders = Atomic<Int>(0)
    let descriptions = Atomic<Int>(0)
    /// Headers read to settle imgproxy URLs.
    let headers = Atomic<Int>(0)
    /// Milliseconds each render takes, so that requests can meet in flight.
    let delayMs = Atomic<Int>(0)

    static func source(_ file: OpenFile) throws(ServiceFailure) -> SourceDescription {
        let text = String(decoding: file.regularFileSize.flatMap { file.read(count: Int($0)) } ?? [], as: UTF8.self)
        let words = text.split(separator: " ")
        let size = words.first?.split(separator: "x").compactMap { Int($0) } ?? []
        guard size.count == 2, words.count >= 2 else {
            throw ServiceFailure(AspectError(.unsupportedSource, "the source is not an image"), stage: "decode")
        }
        // "pages=N" among the words: a paged source; "duration=S": a video.
        let pages = words.first { $0.hasPrefix("pages=") }.flatMap { Int($0.dropFirst(6)) } ?? 1
        let duration = words.first { $0.hasPrefix("duration=") }.flatMap { Double($0.dropFirst(9)) }
        return SourceDescription(
            size: Size(width: size[0], height: size[1]), hasAlpha: words.contains("alpha"), format: String(words[1]),
            bytes: Int64(text.utf8.count), pages: pages, duration: duration)
    }

    func render(
        _ file: OpenFile, reading: SourceReading, wantFacts: Bool,
        order: (SourceDescription) throws(AspectError) -> RenderOrder
    )
        throws(ServiceFailure) -> RenderedImage
    {
        let source = try Self.source(file)
        let planned: RenderOrder
        do throws(AspectError) {
            planned = try order(source)
        } catch {
            throw ServiceFailure(error, stage: "plan")
        }
        renders.add(1, ordering: .relaxed)
        let delay = delayMs.load(ordering: .relaxed)
        if delay > 0 { usleep(UInt32(delay * 1000)) }
        let out = planned.plan.output
        // A video's moments, when there are any: "t=1,2,3".
        let moments =
            planned.moments.isEmpty ? "" : " t=" + planned.moments.map { NumberSyntax.text($0) }.joined(separator: ",")
        // q=auto: this renderer "chooses" the top of the range, so the plumbing can be seen.
        let auto = planned.autoQuality.map { " auto=\($0.min)-\($0.max)" } ?? ""
        // The facts /info would give, when asked: what describe says, without counting one.
        let facts = wantFacts ? Self.facts(source) : nil
        return RenderedImage(
            bytes: Array(
                "\(out.width)x\(out.height) \(planned.format.rawValue) q=\(planned.quality ?? 0)\(moments)\(auto)".utf8),
            format: planned.format, quality: planned.autoQuality?.max, facts: facts)
    }

    func describe(_ file: OpenFile, reading: SourceReading) throws(ServiceFailure) -> SourceFacts {
        let source = try Self.source(file)
        do throws(AspectError) { try source.check(page: reading.page) } catch {
            throw ServiceFailure(error, stage: "header")
        }
        descriptions.add(1, ordering: .relaxed)
        return Self.facts(source)
    }

    func header(_ file: OpenFile, reading: SourceReading) throws(ServiceFailure) -> SourceDescription {
        headers.add(1, ordering: .relaxed)
        return try Self.source(file)
    }

    static func facts(_ source: SourceDescription) -> SourceFacts {
        SourceFacts(
            description: source, orientation: 1, frames: 1, pages: source.pages,
            video: source.duration.map { VideoFacts(duration: $0, codec: "h264", fps: 29.97) }, previewWidth: 4,
            previewHeight: 4,
            previewRGBA: [UInt8](repeating: 128, count: 64))
    }
}
