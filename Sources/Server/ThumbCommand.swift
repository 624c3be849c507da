import Configuration
import Core
import Foundation
import Imaging
import Syscalls

/// `aspect thumb SRC OUT [--w N …]`: the service's pipeline for scripts.
enum ThumbCommand {
    /// The flags: every `/thumb` parameter of the same name (ThumbRequest's list is the one
    /// list), but `src` (SRC), `format` (OUT's extension) and `sig`; and `preset`.
    static let parameters = ThumbRequest.parameterNames.filter { !["src", "format", "sig"].contains($0) } + ["preset"]

    /// What each flag's value looks like, for the usage line.
    static let valueHints = [
        "w": "N", "h": "N", "ratio": "R", "mode": "M", "gravity": "G", "fx": "X", "fy": "Y", "upscale": "0|1",
        "dpr": "D", "shape": "S", "radius": "N", "bg": "RRGGBB[AA]", "q": "N", "crop": "X,Y,W,H",
        "rotate": "90|180|270", "flip": "h|v|hv", "blur": "S", "sharpen": "S", "frames": "1", "preset": "NAME",
        "format": "best", "accept": "A",
    ]

    static let usage: String = {
        let prefix = "Usage: aspect thumb SRC OUT "
        var lines: [String] = []
        var line = prefix
        for name in parameters + ["format", "accept"] {
            let flag = "[--\(name) \(valueHints[name] ?? "VALUE")]"
            if line.count + flag.count > 100 {
                lines.append(line)
                line = String(repeating: " ", count: prefix.count)
            }
            line += (line.hasSuffix(" ") ? "" : " ") + flag
        }
        lines.append(line)
        return lines.joined(separator: "\n") + """


            Makes one thumbnail with the same pipeline and rules as GET /thumb. The format comes from
            OUT's extension (.jpg, .jpeg, .png, .webp, .avif, .jxl, .gif); with --format best, the smallest
            of the formats --accept takes (default image/avif,image/webp,*/*) is written to OUT with the
            chosen format's extension in place of its own, and that path printed. Limits come from the configuration
            (config.json if present, ASPECT_* variables). Exit status: 0 done, 2 bad arguments,
            1 the source could not be made into a thumbnail.
            """
    }()

    static func run(_ args: [String]) -> Int32 {
        // The batch form (SPEC: Warming and batches).
        if args.contains(where: { $0 == "--out" || $0.hasPrefix("--out=") }) { return BatchCommand.run(args) }
        if args.contains("-h") || args.contains("--help") {
            print(usage)
            return 0
        }
        var positional: [String] = []
        var query: [(name: String, value: String)] = [("src", "source")]
        var best = false
        var accept = "image/avif,image/webp,*/*"
        var i = 0
        while i < args.count {
            let arg = args[i]
            i += 1
            guard arg.hasPrefix("--") else {
                positional.append(arg)
                continue
            }
            var name = String(arg.dropFirst(2))
            var value: String
            if let eq = name.firstIndex(of: "=") {
                value = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            } else {
                guard i < args.count else { return fail(2, "--\(name) needs a value") }
                value = args[i]
                i += 1
            }
            if name == "format" {
                guard value == "best" else {
                    return fail(2, "--format takes best; else OUT's extension says the format")
                }
                best = true
                continue
            }
            if name == "accept" {
                accept = value
                continue
            }
            guard parameters.contains(name) else { return fail(2, "unknown flag --\(name)\n\n\(usage)") }
            query.append((name, value))
        }
        guard positional.count == 2 else { return fail(2, "give SRC and OUT\n\n\(usage)") }
        let (src, given) = (positional[0], positional[1])
        var out = given
        if best {
            query.append(("format", "best"))
        } else {
            guard let format = ImageFormat(fileExtension: URL(fileURLWithPath: out).pathExtension) else {
                return fail(2, "OUT must end in .jpg, .jpeg, .png, .webp, .avif, .jxl or .gif, got '\(out)'")
            }
            query.append(("format", format.rawValue))
        }

        guard case .loaded(var config) = ConfigCommand.load([]) else { return 2 }
        let request: ThumbRequest
        switch Self.request(query, config) {
        case .success(let r): request = r
        case .failure(let e): return fail(2, e.message)
        }
        // libvips' and GLib's own lines (a decoder's remarks as q=auto and best measure their
        // results) are not the caller's business; Aspect's own warnings are.
        Vips.routeLog(debug: false) { level, domain, message in
            guard level != .debug, !["VIPS", "GLib", "GLib-GObject", "GLib-GIO", "GModule", "glib"].contains(domain)
            else { return }
            Console.error("aspect thumb: \(domain): \(message)")
        }
        do throws(ImagingError) {
            try Vips.restrictLoaders(to: Set(config.images.formats))
            var thumbnailer = try Thumbnailer(limits: ImagingLimits(config))
            if request.watermark != nil,
                let problem = WatermarkLoader.load(&config, into: &thumbnailer, from: SourceRoot.store(config))
            {
                return fail(2, problem)
            }
            let result = try thumbnailer.thumbnail(
                path: src, request: request, requestLimits: config.requestLimits, accept: best ? accept : nil)
            if best {
                let url = URL(fileURLWithPath: given)
                let stem =
                    ImageFormat(fileExtension: url.pathExtension) != nil ? url.deletingPathExtension().path : given
                out = stem + "." + result.format.fileExtension
            }
            // Whole or not at all: a temporary file beside it, then a rename.
            let dir = URL(fileURLWithPath: out).deletingLastPathComponent().path
            let temp = "\(dir)/.\(URL(fileURLWithPath: out).lastPathComponent).\(getpid()).tmp"
            guard AtomicFile.write(out, result.bytes, temporary: temp) else {
                return fail(1, "cannot write \(out): \(String(cString: strerror(errno)))")
            }
            if best { print(out) }
            return 0
        } catch {
            // Bad geometry for this source is the caller's to fix: a bad argument.
            let status: Int32 = error.error.code == .badParam ? 2 : 1
            return fail(status, "\(src): \(error.error.message)" + (error.detail.isEmpty ? "" : " (\(error.detail))"))
        }
    }

    /// The request `pairs` (`src` first, as a stand-in) make, the configuration's presets
    /// expanded as the service expands them; a refusal says SRC for the source.
    static func request(_ pairs: [(name: String, value: String)], _ config: Config) -> Result<
        ThumbRequest, ArgumentError
    > {
        do throws(AspectError) {
            let expanded = try config.parsedPresets.expand(QueryParameters(pairs: pairs), onlyPresets: false)
            return .success(try ThumbRequest.parse(expanded, limits: config.requestLimits))
        } catch {
            return .failure(ArgumentError(error.message.replacingOccurrences(of: "src 'source'", with: "SRC")))
        }
    }

    static func fail(_ status: Int32, _ message: String) -> Int32 {
        Console.error("aspect thumb: \(message)")
        return status
    }
}
