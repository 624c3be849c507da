import Foundation

/// The team's real photos: `ASPECT_PHOTOS` (scripts/test.sh sets it to the copy
/// scripts/fetch-photos.sh made from Debian's packages), else the shared folder beside the
/// checkout, else that copy. A test that needs them fails, rather
/// than skips, when none has them.
public enum Photos {
    public struct Missing: Error, CustomStringConvertible {
        public let description: String
    }

    public static var folder: URL? {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let candidates = [
            ProcessInfo.processInfo.environment["ASPECT_PHOTOS"].map { URL(fileURLWithPath: $0) },
            root.deletingLastPathComponent().appendingPathComponent("shared/images"),
            root.appendingPathComponent(".build/photos"),
        ].compactMap { $0 }
        return candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("big.jpg").path) }
    }

    public static func path(_ name: String) throws -> String {
        guard let folder else {
            throw Missing(description: "no photos: run scripts/fetch-photos.sh or set ASPECT_PHOTOS")
        }
        let path = folder.appendingPathComponent(name).path
        guard FileManager.default.fileExists(atPath: path) else {
            throw Missing(description: "\(name) is missing from \(folder.path)")
        }
        return path
    }
}
