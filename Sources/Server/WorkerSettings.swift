import Configuration
import Core
import Foundation
import Imaging
import Isolation

/// What a render worker is told by the service, as its first message (SPEC: Isolation): only
/// the imaging settings it needs, the watermarks' pixels and the warm-up samples, never
/// the configuration file, a secret or a path to read.
struct WorkerSettings: Codable {
    /// A part of the blob: a watermark's pixels (RGBA, `width` × `height`) or a warm-up
    /// sample (an encoded file of the format `name`).
    struct Part: Codable {
        var name: String
        var width = 0
        var height = 0
        var bytes: Int
    }

    var imaging: ImagingLimits
    var debug: Bool
    var memoryBytes: Int64
    var resultBytes: Int64
    var strict: Bool
    var watermarks: [Part]
    var samples: [Part]

    /// The largest settings message a worker takes (watermarks are RGBA in it).
    static let largest: Int64 = 1 << 30

    /// The settings of `config` and the images `thumbnailer` read at start-up, as the
    /// handshake a new worker is sent.
    static func handshake(_ config: Config, _ thumbnailer: Thumbnailer) -> ProcessRenderer.Handshake {
        var blob: [UInt8] = []
        var marks: [Part] = []
        for (name, image) in thumbnailer.watermarks.sorted(by: { $0.key < $1.key }) {
            marks.append(Part(name: name, width: image.size.width, height: image.size.height, bytes: image.rgba.count))
            blob += image.rgba
        }
        var samples: [Part] = []
        for (format, bytes) in WarmUp.samples(formats: Set(config.images.formats)) {
            samples.append(Part(name: format, bytes: bytes.count))
            blob += bytes
        }
        let settings = WorkerSettings(
            imaging: ImagingLimits(config), debug: config.log.level == .debug,
            memoryBytes: config.limits.workerMemoryBytes, resultBytes: config.limits.maxResultBytes,
            strict: config.server.sandbox == .strict, watermarks: marks, samples: samples)
        let json = (try? JSONEncoder().encode(settings)).map(Array.init) ?? []
        return ProcessRenderer.Handshake(json: json, blob: blob)
    }

    /// The blob cut into its parts, each checked against its length (nil when they do not
    /// add up): the watermarks by name, and the samples in order.
    func parts(of blob: [UInt8]) -> (watermarks: [String: WatermarkImage], samples: [(String, [UInt8])])? {
        var at = 0
        func take(_ n: Int) -> [UInt8]? {
            guard n >= 0, n <= blob.count - at else { return nil }
            defer { at += n }
            return Array(blob[at..<(at + n)])
        }
        var marks: [String: WatermarkImage] = [:]
        for m in watermarks {
            guard m.width >= 1, m.height >= 1, m.width <= 1 << 15, m.height <= 1 << 15,
                m.bytes == m.width * m.height * 4, let rgba = take(m.bytes)
            else { return nil }
            marks[m.name] = WatermarkImage(size: Size(width: m.width, height: m.height), rgba: rgba)
        }
        var files: [(String, [UInt8])] = []
        for s in samples {
            guard let bytes = take(s.bytes) else { return nil }
            files.append((s.name, bytes))
        }
        return at == blob.count ? (marks, files) : nil
    }
}
