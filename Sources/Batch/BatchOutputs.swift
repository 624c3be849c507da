import Core
import Foundation
import Synchronization

/// What `aspect thumb SRC… --out DIR` makes (SPEC: Warming and batches): the sources found,
/// one output per value of each comma list and its name, which outputs are up to date,
/// and the manifest.
public enum BatchOutputs {
    /// One output to make.
    public struct Job: Sendable {
        /// The source file, as found.
        public var source: String
        /// Its path below the folder it was found in (its name, for a file given alone).
        public var relative: String
        /// The output, under DIR with the source's sub-folders.
        public var output: String
        /// The parameters (no `src`, no `format`), one value each.
        public var parameters: [(name: String, value: String)]
        public var format: ImageFormat

        /// What made the output, for the up-to-date record: its parameters and format.
        public var flags: String {
            (parameters.map { "\($0.name)=\($0.value)" } + ["format=\(format.rawValue)"]).joined(separator: "&")
        }
    }

    /// The file extensions of the formats the service reads (`images.formats`' names).
    public static func extensions(of formats: [String]) -> Set<String> {
        let names: [String: [String]] = [
            "jpeg": ["jpg", "jpeg"], "png": ["png"], "webp": ["webp"], "gif": ["gif"],
            "heif": ["heic", "heif", "avif"], "tiff": ["tif", "tiff"], "jxl": ["jxl"], "svg": ["svg"],
            "pdf": ["pdf"], "mp4": ["mp4", "m4v", "mov"], "webm": ["webm"], "mkv": ["mkv"],
        ]
        return Set(formats.flatMap { names[$0] ?? [$0] })
    }

    /// The sources named: a file as it is, a folder searched recursively for files with
    /// `extensions` (dotfiles skipped), each with its path below that folder; and what
    /// names nothing.
    public static func sources(_ args: [String], extensions: Set<String>) -> (
        found: [(path: String, relative: String)], missing: [String]
    ) {
        var found: [(path: String, relative: String)] = []
        var missing: [String] = []
        let fm = FileManager.default
        for arg in args {
            var isDir: ObjCBool = false
            guard fm.fileExists(atPath: arg, isDirectory: &isDir) else {
                missing.append(arg)
                continue
            }
            guard isDir.boolValue else {
                found.append((arg, (arg as NSString).lastPathComponent))
                continue
            }
            let root = arg.hasSuffix("/") ? String(arg.dropLast()) : arg
            var here: [String] = []
            let walker = fm.enumerator(atPath: root)
            while let path = walker?.nextObject() as? String {
                if (path as NSString).lastPathComponent.hasPrefix(".") {
                    walker?.skipDescendants()
                    continue
                }
                guard extensions.contains((path as NSString).pathExtension.lowercased()) else { continue }
                var sub: ObjCBool = false
                if fm.fileExists(atPath: root + "/" + path, isDirectory: &sub), !sub.boolValue { here.append(path) }
            }
            found += here.sorted().map { (root + "/" + $0, $0) }
        }
        return (found, missing)
    }

    /// The format a source keeps when none is asked: its own where Aspect writes it, else JPEG.
    public static func defaultFormat(of source: String) -> ImageFormat {
        let ext = (source as NSString).pathExtension.lowercased()
        switch ext {
        case "jpg", "jpeg": return .jpeg
        case "png": return .png
        case "webp": return .webp
        case "gif": return .gif
        case "avif": return .avif
        case "jxl": return .jxl
        default: return .jpeg
        }
    }

    /// Every output of every source: the product of the comma lists (`formats` one of
    /// them), named `STEM.EXT`, or with lists `STEM-320w.EXT`, `STEM-320w-2x.EXT` (a list of
    /// any other parameter adds `-NAMEVALUE`).
    public static func jobs(
        sources: [(path: String, relative: String)], out: String, lists: [(name: String, values: [String])],
        formats: [ImageFormat]
    ) -> [Job] {
        var combos: [[(name: String, value: String)]] = [[]]
        for (name, values) in lists { combos = combos.flatMap { c in values.map { c + [(name, $0)] } } }
        let varying = Set(lists.filter { $0.values.count > 1 }.map(\.name))
        var jobs: [Job] = []
        for s in sources {
            let rel = s.relative as NSString
            let folder = rel.deletingLastPathComponent
            let stem = (rel.lastPathComponent as NSString).deletingPathExtension
            for combo in combos {
                let suffix = combo.filter { varying.contains($0.name) }.map { suffixPart($0.name, $0.value) }
                for format in formats.isEmpty ? [defaultFormat(of: s.path)] : formats {
                    let name = ([stem] + suffix).joined(separator: "-") + "." + format.fileExtension
                    let output = out + "/" + (folder.isEmpty ? name : folder + "/" + name)
                    jobs.append(
                        Job(source: s.path, relative: s.relative, output: output, parameters: combo, format: format))
                }
            }
        }
        return jobs
    }

    /// `320w`, `240h`, `2x`; another parameter as its name and value, safe in a file name.
    static func suffixPart(_ name: String, _ value: String) -> String {
        switch name {
        case "w": return value + "w"
        case "h": return value + "h"
        case "dpr": return value + "x"
        default:
            let safe = value.map { $0.isLetter || $0.isNumber || $0 == "." ? $0 : "_" }
            return name + String(safe)
        }
    }

    /// The record of what made each output (`DIR/.aspect-thumb.json`): an output is up to
    /// date when it is no older than its source and was made with the same flags; its
    /// manifest entry is kept with it, so a run that skips it still lists it.
    public final class Record: Sendable {
        let path: String
        let made: Mutex<[String: (flags: String, entry: Entry)]>

        public init(out: String) {
            path = out + "/.aspect-thumb.json"
            let data = FileManager.default.contents(atPath: path) ?? Data()
            let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: [String: Any]] ?? [:]
            var made: [String: (flags: String, entry: Entry)] = [:]
            for (output, o) in object {
                guard let flags = o["flags"] as? String, let e = o["entry"] as? [String: Any], let entry = Entry(e)
                else { continue }
                made[output] = (flags, entry)
            }
            self.made = Mutex(made)
        }

        /// The recorded entry of an output that is up to date, else nil.
        public func upToDate(_ job: Job) -> Entry? {
            guard let (flags, entry) = made.withLock({ $0[job.output] }), flags == job.flags,
                let out = try? FileManager.default.attributesOfItem(atPath: job.output)[.modificationDate] as? Date,
                let src = try? FileManager.default.attributesOfItem(atPath: job.source)[.modificationDate] as? Date,
                out >= src
            else { return nil }
            return entry
        }

        public func madeOutput(_ job: Job, _ entry: Entry) { made.withLock { $0[job.output] = (job.flags, entry) } }

        /// Written whole (a temporary file, then a rename).
        public func save() {
            let object = made.withLock { m in
                m.mapValues { ["flags": $0.flags, "entry": $0.entry.object] as [String: Any] }
            }
            guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
            let temp = path + ".\(getpid()).tmp"
            guard FileManager.default.createFile(atPath: temp, contents: data) else { return }
            _ = rename(temp, path)
        }
    }

    /// One manifest entry: what a page needs for `width`/`height`, `srcset` and a placeholder.
    public struct Entry: Sendable {
        public var source: String
        public var path: String
        public var width: Int
        public var height: Int
        public var format: String
        public var bytes: Int
        public var thumbhash: String

        public init(
            source: String, path: String, width: Int, height: Int, format: String, bytes: Int, thumbhash: String
        ) {
            (self.source, self.path, self.width, self.height) = (source, path, width, height)
            (self.format, self.bytes, self.thumbhash) = (format, bytes, thumbhash)
        }

        init?(_ o: [String: Any]) {
            guard let source = o["source"] as? String, let path = o["path"] as? String, let width = o["width"] as? Int,
                let height = o["height"] as? Int, let format = o["format"] as? String, let bytes = o["bytes"] as? Int,
                let thumbhash = o["thumbhash"] as? String
            else { return nil }
            self.init(
                source: source, path: path, width: width, height: height, format: format, bytes: bytes,
                thumbhash: thumbhash)
        }

        var object: [String: Any] {
            [
                "source": source, "path": path, "width": width, "height": height, "format": format, "bytes": bytes,
                "ratio": height > 0 ? Double(width) / Double(height) : 0, "thumbhash": thumbhash,
            ]
        }
    }

    /// The manifest's JSON: the entries in the jobs' order.
    public static func manifest(_ entries: [Entry]) -> Data {
        (try? JSONSerialization.data(
            withJSONObject: entries.map(\.object), options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]))
            ?? Data("[]".utf8)
    }
}
