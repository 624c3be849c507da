import Core
import Foundation

/// A worker's answers held to what an honest one could say (SPEC: Isolation, "every answer
/// is distrusted"): every size, count, length and offset is checked against the plan and
/// the limits before the service uses it. Each check gives the problem, or nil.
enum AnswerCheck {
    /// The largest side any header may report: far past every limit, far below Int.max.
    static let largestSide = 1 << 30
    /// The largest preview `/info` asks for, a side (it asks at most 100).
    static let largestPreview = 128

    static func description(_ d: SourceDescription) -> String? {
        guard (1...largestSide).contains(d.size.width), (1...largestSide).contains(d.size.height) else {
            return "a source of \(d.size)"
        }
        guard (1...10_000_000).contains(d.frames), (1...10_000_000).contains(d.pages), d.bytes >= 0 else {
            return "a source of \(d.frames) frames and \(d.pages) pages"
        }
        if let t = d.duration, !(t.isFinite && t >= 0) { return "a duration of \(t)" }
        if let u = d.untrimmed, !((1...largestSide).contains(u.width) && (1...largestSide).contains(u.height)) {
            return "an untrimmed size of \(u)"
        }
        if let r = d.trim {
            let whole = d.untrimmed ?? d.size
            guard r.x >= 0, r.y >= 0, r.width >= 1, r.height >= 1, r.x <= whole.width - r.width,
                r.y <= whole.height - r.height
            else { return "a trim of \(r) in \(whole)" }
        }
        return nil
    }

    static func facts(_ f: SourceFacts, previewBytes: Int) -> String? {
        if let problem = description(f.description) { return problem }
        let (w, h) = (f.previewWidth, f.previewHeight)
        guard (0...largestPreview).contains(w), (0...largestPreview).contains(h), previewBytes == w * h * 4 else {
            return "a preview of \(w)×\(h) in \(previewBytes) bytes"
        }
        guard (1...8).contains(f.orientation), (1...10_000_000).contains(f.frames), (1...10_000_000).contains(f.pages)
        else { return "facts of orientation \(f.orientation), \(f.frames) frames, \(f.pages) pages" }
        if let v = f.video, !(v.duration.isFinite && v.duration >= 0 && v.fps.isFinite && v.fps >= 0) {
            return "a video of \(v.duration) s at \(v.fps) fps"
        }
        for face in f.faces ?? [] {
            let values = [face.x, face.y, face.w, face.h]
            guard values.allSatisfy({ $0.isFinite && $0 >= 0 && $0 <= 1 }) else { return "a face at \(values)" }
        }
        return nil
    }

    /// A result: the format the plan asked for (with `format=best`, one of its candidates,
    /// as the choice says, lossless only where a lossless one was weighed) and its size,
    /// by its own header, within `limit` bytes.
    static func result(
        _ bytes: ArraySlice<UInt8>, format: ImageFormat, chosen: BestChoice? = nil, order: RenderOrder, limit: Int64
    ) -> String? {
        guard Int64(bytes.count) <= limit else { return "a result of \(bytes.count) bytes, over \(limit)" }
        if let chosen {
            guard let best = order.best, chosen.format == format,
                chosen.lossless ? best.lossless.contains(format) : best.lossy.contains(format)
            else { return "a choice of \(chosen.name) where \(order.best == nil ? "none" : "another") was planned" }
        } else {
            guard format == order.format, order.best == nil else {
                return "a \(format) result where \(order.best == nil ? order.format.rawValue : "a choice") was planned"
            }
        }
        guard let header = ResultHeader(bytes), header.format == format else {
            return "a result that is not a \(format) by its first bytes"
        }
        // A video's sides are not read back (ResultHeader): its magic bytes and length are.
        guard format.isVideo || header.size == order.resultSize else {
            return "a result of \(header.size.map { "\($0)" } ?? "no size") where \(order.resultSize) was planned"
        }
        return nil
    }
}
