import CAV
import Foundation
import Imaging

/// What FFmpeg reads back of a video file (the tests' check on a preview as MP4 or WebM).
public struct VideoFile: Equatable, Sendable {
    public var frames: Int
    public var audioStreams: Int
    public var width: Int
    public var height: Int
    public var seconds: Double
    public var codec: String

    /// FFmpeg's reading of `bytes`, written to a temporary file; nil when it cannot open them.
    public static func read(_ bytes: [UInt8]) -> VideoFile? {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aspect-video-\(UUID())").path
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { return nil }
        defer { unlink(path) }
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var (frames, audio, width, height): (Int32, Int32, Int32, Int32) = (0, 0, 0, 0)
        var seconds = 0.0
        var codec = [CChar](repeating: 0, count: 32)
        guard cav_count(fd, &frames, &audio, &width, &height, &seconds, &codec, codec.count) == 0 else { return nil }
        return VideoFile(
            frames: Int(frames), audioStreams: Int(audio), width: Int(width), height: Int(height), seconds: seconds,
            codec: String(decoding: codec.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// The names of an MP4's top-level boxes, in order (`ftyp`, `moov`, `mdat`, …).
    public static func topLevelBoxes(_ bytes: [UInt8]) -> [String] {
        var names: [String] = []
        var i = 0
        while i + 8 <= bytes.count {
            let size = bytes[i..<(i + 4)].reduce(0) { $0 << 8 | Int($1) }
            names.append(String(decoding: bytes[(i + 4)..<(i + 8)], as: UTF8.self))
            guard size >= 8 else { break }
            i += size
        }
        return names
    }
}
