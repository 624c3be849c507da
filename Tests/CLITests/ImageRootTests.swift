import Foundation
import Testing

@testable import Server

/// The window between the real-path check and the open: a source swapped for a symlink
/// after `confine` checked it is not followed (openat2 with RESOLVE_NO_SYMLINKS).
@Suite struct ImageRootTests {
    @Test func aSourceSwappedForALinkAfterItsCheckIsNotFollowed() throws {
        let fm = FileManager.default
        let dir = fm.temporaryDirectory.appendingPathComponent("aspect-root-\(UUID().uuidString)")
        defer { try? fm.removeItem(at: dir) }
        let images = dir.appendingPathComponent("images")
        let outside = dir.appendingPathComponent("outside")
        try fm.createDirectory(at: images.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try fm.createDirectory(at: outside, withIntermediateDirectories: true)
        try Data("inside".utf8).write(to: images.appendingPathComponent("a.jpg"))
        try Data("inside".utf8).write(to: images.appendingPathComponent("sub/b.jpg"))
        try Data("secret".utf8).write(to: outside.appendingPathComponent("a.jpg"))
        try Data("secret".utf8).write(to: outside.appendingPathComponent("b.jpg"))
        let root = ImageRoot(images.path)

        // Checked and opened with nothing in between: the file inside.
        let a = try root.confine("a.jpg").get()
        let opened = try root.open(a, src: "a.jpg").get()
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(read(opened.fd, &buffer, 16) == 6 && buffer.starts(with: Array("inside".utf8)))

        // The file swapped for a link out, and a folder swapped for one, after the check.
        let b = try root.confine("sub/b.jpg").get()
        try fm.removeItem(at: images.appendingPathComponent("a.jpg"))
        try fm.createSymbolicLink(
            at: images.appendingPathComponent("a.jpg"), withDestinationURL: outside.appendingPathComponent("a.jpg"))
        try fm.removeItem(at: images.appendingPathComponent("sub"))
        try fm.createSymbolicLink(at: images.appendingPathComponent("sub"), withDestinationURL: outside)
        for (source, src) in [(a, "a.jpg"), (b, "sub/b.jpg")] {
            switch root.open(source, src: src) {
            case .success: Issue.record("\(src): the swapped link was followed out of the root")
            case .failure(let e): #expect(e.code == .forbiddenPath, "\(src): \(e)")
            }
        }
        // A file gone meanwhile is a 404, not a 403.
        try fm.removeItem(at: images.appendingPathComponent("a.jpg"))
        if case .failure(let e) = root.open(a, src: "a.jpg") {
            #expect(e.code == .notFound)
        } else {
            Issue.record("a missing file opened")
        }
    }
}
