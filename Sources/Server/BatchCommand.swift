import Batch
import Configuration
import Core
import Foundation
import Glibc
import Imaging
import Placeholders
import SourceStores
import Synchronization
import Syscalls

/// `aspect thumb SRC… --out DIR [flags]` (SPEC: Warming and batches): every source, a file
/// or a folder searched recursively, made into one output per value of each comma list,
/// with the service's pipeline and rules; outputs already up to date are skipped.
enum BatchCommand {
    static let usage = """
        Usage: aspect thumb SRC… --out DIR [--w 320,640,1280 …] [--format webp,avif] [--jobs N] [--force]
                            [--manifest FILE] [--progress auto|bar|plain|none] [--json] [--preset NAME]

        Each SRC is a file or a folder (searched recursively for the formats images.formats names; its
        sub-folders are kept under DIR). Every /thumb parameter is a flag; a comma list makes one output
        per value (the product of the lists), named STEM-320w.EXT, STEM-320w-2x.EXT (--dpr), or STEM.EXT
        without lists. --format (default: the source's own where Aspect writes it, else JPEG). An output
        newer than its source and made with the same flags is skipped (--force makes it again). --jobs
        (default: the cores) run at once. --manifest FILE: JSON, one object per output with source, path,
        width, height, format, bytes, ratio and the source's thumbhash. A source that fails is named and
        the rest are made. Exit status: 0 all made, 1 any failed, 2 bad arguments, 130 interrupted.
        """

    static func run(_ args: [String]) -> Int32 {
        if args.contains("-h") || args.contains("--help") {
            print(usage)
            return 0
        }
        let parsed: BatchArguments
        let mode: BatchProgress.Mode
        let jobsAtOnce: Int
        do throws(ArgumentError) {
            parsed = try BatchArguments.parse(
                args, valued: ["out", "jobs", "manifest", "progress", "preset"], alone: ["force", "json"])
            mode = try parsed.progressMode()
            jobsAtOnce = try parsed.count("jobs", default: ProcessInfo.processInfo.activeProcessorCount, range: 1...256)
        } catch {
            return fail(2, error.message + "\n\n" + usage)
        }
        guard let out = parsed.value("out"), !parsed.positional.isEmpty else {
            return fail(2, "give one or more SRC and --out DIR\n\n" + usage)
        }
        guard case .loaded(var config) = ConfigCommand.load([]) else { return 2 }
        var lists = parsed.lists.filter { $0.name != "format" }
        if let presets = parsed.values["preset"] { lists.insert(("preset", presets), at: 0) }
        var formats: [ImageFormat] = []
        for name in parsed.lists.first(where: { $0.name == "format" })?.values ?? [] {
            guard let f = ImageFormat(rawValue: name == "jpg" ? "jpeg" : name) else {
                return fail(2, "--format takes jpeg, png, webp, avif, jxl or gif, got \(name)")
            }
            formats.append(f)
        }
        let (found, missing) = BatchOutputs.sources(
            parsed.positional, extensions: BatchOutputs.extensions(of: config.images.formats))
        let jobs = BatchOutputs.jobs(sources: found, out: out, lists: lists, formats: formats)
        // Every combination is checked before anything is made: a bad flag is a bad argument.
        let limits = config.requestLimits
        var requests: [ThumbRequest] = []
        for job in jobs {
            switch ThumbCommand.request(
                [("src", "source")] + job.parameters + [("format", job.format.rawValue)], config)
            {
            case .success(let r): requests.append(r)
            case .failure(let e): return fail(2, e.message)
            }
        }
        var thumbnailer: Thumbnailer
        // libvips' own warnings (a damaged file's tiles) are not the summary's: each failure
        // is named there once.
        Vips.routeLog(debug: false) { _, _, _ in }
        do throws(ImagingError) {
            try Vips.restrictLoaders(to: Set(config.images.formats))
            thumbnailer = try Thumbnailer(limits: ImagingLimits(config))
        } catch {
            return fail(1, "\(error)")
        }
        if requests.contains(where: { $0.watermark != nil }),
            let problem = WatermarkLoader.load(&config, into: &thumbnailer, from: SourceRoot.store(config))
        {
            return fail(2, problem)
        }
        let maker = Maker(
            thumbnailer: thumbnailer, limits: limits, record: BatchOutputs.Record(out: out),
            force: parsed.switches.contains("force"), manifest: parsed.value("manifest") != nil)
        let progress = BatchProgress(
            label: "thumb", total: jobs.count + missing.count, mode: mode, isTerminal: isatty(2) == 1,
            write: { Console.write(stderr: $0) })
        for m in missing { progress.record(.failed(target: m, status: "missing", error: "no such file or folder")) }
        Interrupt.install()
        final class Entries: Sendable { let made = Mutex<[Int: BatchOutputs.Entry]>([:]) }
        let entries = Entries()
        let checked = requests
        runConcurrently(count: jobs.count, threads: jobsAtOnce) { i in
            let (outcome, entry) = maker.make(jobs[i], checked[i])
            if let entry { entries.made.withLock { $0[i] = entry } }
            progress.record(outcome)
        }
        maker.record.save()
        if let manifest = parsed.value("manifest") {
            let all = entries.made.withLock { e in (0..<jobs.count).compactMap { e[$0] } }
            guard FileManager.default.createFile(atPath: manifest, contents: BatchOutputs.manifest(all)) else {
                return fail(1, "cannot write \(manifest)")
            }
        }
        let summary = progress.finish(interrupted: Interrupt.isRequested)
        return WarmCommand.conclude(summary, json: parsed.switches.contains("json"), failedFile: nil)
    }

    static func fail(_ status: Int32, _ message: String) -> Int32 {
        Console.error("aspect thumb: \(message)")
        return status
    }

    /// Makes one output: skipped when up to date; else rendered, written whole, recorded.
    struct Maker: Sendable {
        let thumbnailer: Thumbnailer
        let limits: RequestLimits
        let record: BatchOutputs.Record
        let force: Bool
        let manifest: Bool
        /// Each source's ThumbHash, made once (the manifest's, as /info says it).
        let hashes = Hashes()

        final class Hashes: Sendable {
            let known = Mutex<[String: String]>([:])
        }

        func make(_ job: BatchOutputs.Job, _ request: ThumbRequest) -> (BatchProgress.Outcome, BatchOutputs.Entry?) {
            if !force, let entry = record.upToDate(job) { return (.skipped, entry) }
            func failed(_ why: String) -> (BatchProgress.Outcome, BatchOutputs.Entry?) {
                (.failed(target: job.source + " → " + job.output, status: "failed", error: why), nil)
            }
            let rendered: Thumbnailer.Rendered
            do throws(ImagingError) {
                rendered = try thumbnailer.thumbnail(path: job.source, request: request, requestLimits: limits)
            } catch {
                return failed(error.error.message + (error.detail.isEmpty ? "" : " (\(error.detail))"))
            }
            let folder = (job.output as NSString).deletingLastPathComponent
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                return failed("cannot make \(folder): \(error.localizedDescription)")
            }
            // Whole or not at all: a temporary file beside it, then a rename.
            let temp = "\(folder)/.\((job.output as NSString).lastPathComponent).\(getpid()).tmp"
            guard AtomicFile.write(job.output, rendered.bytes, temporary: temp) else {
                return failed("cannot write \(job.output): \(String(cString: strerror(errno)))")
            }
            let entry = BatchOutputs.Entry(
                source: job.source, path: job.output, width: rendered.plan.output.width,
                height: rendered.plan.output.height, format: rendered.format.rawValue, bytes: rendered.bytes.count,
                thumbhash: manifest ? thumbhash(job.source) : "")
            record.madeOutput(job, entry)
            return (.made, entry)
        }

        /// The source's ThumbHash from the small upright decode `/info` makes.
        func thumbhash(_ source: String) -> String {
            if let known = hashes.known.withLock({ $0[source] }) { return known }
            var text = ""
            if let facts = try? thumbnailer.describe(file: OpenFile.opening(source)),
                let hash = ThumbHash.encode(
                    width: facts.previewWidth, height: facts.previewHeight, rgba: facts.previewRGBA)
            {
                text = Data(hash).base64EncodedString()
            }
            hashes.known.withLock { $0[source] = text }
            return text
        }
    }
}
