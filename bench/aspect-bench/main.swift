import Core
import Foundation
import Imaging
import Synchronization
import Syscalls

// aspect-bench: Aspect's imaging pipeline in process, no HTTP, for BENCHMARKS.md and
// the memory test.
//
//   aspect-bench throughput SOURCE [--query Q] [--iterations N] [--threads T] [--fast-shrink-on-load B]
//       N thumbnails on one thread, then N spread over T threads; prints TSV:
//       source  ms/img(1 thread)  img/s(1 thread)  img/s(T threads)  peak RSS MB
//   aspect-bench profile SOURCE [--query Q] [--iterations N]
//       each stage of one thumbnail (open, plan, decode, every step made whole in memory,
//       encode) timed on its own; prints TSV `source  stage  median ms`, then the whole.
//   aspect-bench rss SOURCE [--query Q] [--iterations N]
//       100 warm-up thumbnails, then N more; prints `rss_start_kb=… rss_end_kb=… failed=…`.
//       SOURCE may be a folder: each thumbnail is then of its next file, in name order,
//       round and round, and files that fail are counted (`failed=…`), not fatal.
//   aspect-bench ssim REFERENCE CANDIDATE
//       the SSIM of luma that q=auto measures, of two image files of one size.
//   aspect-bench search REFERENCE FORMAT
//       q=auto's search replayed on REFERENCE (the unencoded result) measured at every
//       quality from 30 to 90: prints `chosen lowest encodes` (the search's choice, the
//       lowest quality that keeps the picture, and the encodes the search made).
//   aspect-bench faces FILE [--iterations N]
//       the faces found, and the median ms of a describe with faces and without.
//   aspect-bench curve REFERENCE FORMAT
//       the same measures themselves: one line, `quality:ssim` for each quality, 30 to 90.
//   aspect-bench clip RAW WIDTH HEIGHT FPS OUT
//       an H.264 clip (a keyframe every 2 s) of the RGB24 frames one after another in RAW,
//       for bench/previews.sh's footage.

func option(_ name: String, _ args: [String], default value: String) -> String {
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return value }
    return args[i + 1]
}

func statusKB(_ field: String) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
    }
    return -1
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("aspect-bench: \(message)\n".utf8))
    exit(2)
}

let args = Array(CommandLine.arguments.dropFirst())
guard args.count >= 2 else {
    fail("usage: aspect-bench throughput|rss SOURCE [--query Q] [--iterations N] [--threads T]")
}
let (mode, source) = (args[0], args[1])
if mode == "ssim" {
    // aspect-bench ssim REFERENCE CANDIDATE: the SSIM of luma q=auto measures, of two files.
    guard args.count == 3, let a = FileManager.default.contents(atPath: args[1]),
        let b = FileManager.default.contents(atPath: args[2])
    else { fail("usage: aspect-bench ssim REFERENCE CANDIDATE") }
    do throws(ImagingError) {
        print(String(format: "%.5f", try Similarity.lumaSSIM(reference: Array(a), candidate: Array(b))))
        exit(0)
    } catch {
        fail("\(error)")
    }
}
if mode == "clip" {
    guard args.count == 6, let raw = FileManager.default.contents(atPath: args[1]), let w = Int(args[2]),
        let h = Int(args[3]), let fps = Int(args[4]), w > 0, h > 0, fps > 0
    else { fail("usage: aspect-bench clip RAW WIDTH HEIGHT FPS OUT") }
    let size = w * h * 3
    let bytes = [UInt8](raw)
    let frames = stride(from: 0, to: bytes.count - size + 1, by: size).map {
        RawImage(width: w, height: h, bands: 3, pixels: Array(bytes[$0..<($0 + size)]))
    }
    do throws(ImagingError) {
        try ImageFile.writeClip(to: args[5], frames: frames, fps: fps, codec: .h264, keyframeEvery: 2 * fps)
        exit(0)
    } catch {
        fail("\(error)")
    }
}
if mode == "search" || mode == "curve" {
    guard args.count == 3, let a = FileManager.default.contents(atPath: args[1]),
        let format = ImageFormat(rawValue: args[2])
    else { fail("usage: aspect-bench \(mode) REFERENCE FORMAT") }
    let target = AutoQuality()
    do throws(ImagingError) {
        let scores = try Similarity.curve(reference: Array(a), format: format, qualities: target.min...target.max)
        if mode == "curve" {
            print(
                (target.min...target.max).map { "\($0):" + String(format: "%.5f", scores[$0] ?? 0) }.joined(
                    separator: " "))
            exit(0)
        }
        var measured = Set<Int>()
        let chosen = target.search(along: AutoQuality.Axis(format)) { (q: Int) -> Double in
            measured.insert(q)
            return scores[q] ?? 0
        }
        let lowest = (target.min...target.max).first { (scores[$0] ?? 0) >= target.ssim } ?? target.max
        print(chosen, lowest, measured.count + (measured.contains(chosen) ? 0 : 1))
        exit(0)
    } catch {
        fail("\(error)")
    }
}
if mode == "faces" {
    // aspect-bench faces FILE [--iterations N]: the faces found (fractions of the upright
    // picture, as /info gives them) as JSON, then the median ms of N describes with faces
    // and of N without, from the same open: `faces=… ms_with=… ms_without=…`.
    let n = Int(option("--iterations", args, default: "20")) ?? 20
    do {
        let t = try Thumbnailer(limits: ImagingLimits())
        func median(_ reading: SourceReading) throws -> Double {
            var times: [Double] = []
            for _ in 0..<n {
                let start = DispatchTime.now().uptimeNanoseconds
                _ = try t.describe(file: OpenFile.opening(source), reading: reading)
                times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            }
            return times.sorted()[times.count / 2]
        }
        let faces = try t.describe(file: OpenFile.opening(source), reading: SourceReading(faces: true)).faces ?? []
        let json = faces.map { String(format: #"{"x":%.4f,"y":%.4f,"w":%.4f,"h":%.4f}"#, $0.x, $0.y, $0.w, $0.h) }
        let with = try median(SourceReading(faces: true))
        let without = try median(SourceReading())
        print(
            "faces=[\(json.joined(separator: ","))] ms_with=\(String(format: "%.1f", with)) ms_without=\(String(format: "%.1f", without))"
        )
        exit(0)
    } catch {
        fail("\(error)")
    }
}
let query = option("--query", args, default: "w=300&h=225&mode=fill&format=jpeg&q=80")
let iterations = Int(option("--iterations", args, default: "50")) ?? 50
let threads = Int(option("--threads", args, default: "2")) ?? 2
// images.fastShrinkOnLoad: true (the default) or false.
let fastShrinkOnLoad = option("--fast-shrink-on-load", args, default: "true") != "false"

let limits = RequestLimits()
let thumbnailer: Thumbnailer
let request: ThumbRequest
do {
    thumbnailer = try Thumbnailer(
        limits: ImagingLimits(
            maxSourceBytes: 1 << 30, maxSourcePixels: 1 << 30, fastShrinkOnLoad: fastShrinkOnLoad))
    request = try ThumbRequest.parse(query: "src=x&" + query, limits: limits)
} catch {
    fail("\(error)")
}

// The files `rss` goes round: the folder's, in name order, or the one source.
var isFolder: ObjCBool = false
let files: [String] =
    FileManager.default.fileExists(atPath: source, isDirectory: &isFolder) && isFolder.boolValue
    ? ((try? FileManager.default.contentsOfDirectory(atPath: source)) ?? []).sorted().map { "\(source)/\($0)" }
    : [source]
if files.isEmpty { fail("\(source) has no files") }

@Sendable func one() {
    do {
        _ = try thumbnailer.thumbnail(path: source, request: request, requestLimits: limits)
    } catch {
        fail("\(source): \(error)")
    }
}

/// A thumbnail of the next of `files`: true if it was made. Failing is fatal for a single
/// source, counted for a folder.
var next = 0
@MainActor func oneOfTheFiles() -> Bool {
    defer { next = (next + 1) % files.count }
    do {
        _ = try thumbnailer.thumbnail(path: files[next], request: request, requestLimits: limits)
        return true
    } catch {
        if !isFolder.boolValue { fail("\(source): \(error)") }
        return false
    }
}

func seconds(_ body: () -> Void) -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

switch mode {
case "throughput":
    for _ in 0..<3 { one() }
    let single = seconds { for _ in 0..<iterations { one() } }
    let parallel = seconds {
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            let share = iterations / threads + (t < iterations % threads ? 1 : 0)
            for _ in 0..<share { one() }
        }
    }
    let name = URL(fileURLWithPath: source).lastPathComponent
    print(
        String(
            format: "%@\t%.1f\t%.1f\t%.1f\t%.0f", name, 1000 * single / Double(iterations), Double(iterations) / single,
            Double(iterations) / parallel, Double(statusKB("VmHWM")) / 1024))
case "profile":
    // Each stage of one thumbnail, timed on its own (each step's picture made whole
    // before it is timed): medians over the iterations, in ms, in the pipeline's order.
    let times = Mutex<[String: [UInt64]]>([:])
    let order = Mutex<[String]>([])
    var profiled = thumbnailer
    profiled.stageTimer = { stage, ns in
        times.withLock { $0[stage, default: []].append(ns) }
        order.withLock { if !$0.contains(stage) { $0.append(stage) } }
    }
    let whole = Mutex<[UInt64]>([])
    for i in 0..<(iterations + 3) {
        let start = DispatchTime.now().uptimeNanoseconds
        do {
            _ = try profiled.thumbnail(path: source, request: request, requestLimits: limits)
        } catch {
            fail("\(source): \(error)")
        }
        // The first three warm up, and are not counted.
        if i == 2 { times.withLock { $0 = [:] } }
        if i >= 3 { whole.withLock { $0.append(DispatchTime.now().uptimeNanoseconds - start) } }
    }
    func median(_ xs: [UInt64]) -> Double {
        let s = xs.sorted()
        return s.isEmpty ? 0 : Double(s[s.count / 2]) / 1e6
    }
    let name = URL(fileURLWithPath: source).lastPathComponent
    for stage in order.withLock({ $0 }) {
        print(String(format: "%@\t%@\t%.2f", name, stage, median(times.withLock { $0[stage] ?? [] })))
    }
    print(String(format: "%@\t%@\t%.2f", name, "whole", median(whole.withLock { $0 })))
case "rss":
    for _ in 0..<100 { _ = oneOfTheFiles() }
    let start = statusKB("VmRSS")
    var failed = 0
    for _ in 0..<iterations where !oneOfTheFiles() { failed += 1 }
    print("rss_start_kb=\(start) rss_end_kb=\(statusKB("VmRSS")) iterations=\(iterations) failed=\(failed)")
default:
    fail("unknown mode \(mode)")
}
