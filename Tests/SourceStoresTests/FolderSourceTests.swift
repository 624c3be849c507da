import Core
import Foundation
import Glibc
import Testing

@testable import SourceStores

/// The window between the real-path check and the open: a source swapped for a symlink
/// after `confine` checked it is not followed (openat2 with RESOLVE_NO_SYMLINKS).
@Suite struct FolderSourceTests {
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
        let root = FolderSource(images.path)

        // Checked and opened with nothing in between: the file inside.
        let a = try root.confine("a.jpg").get()
        let opened = try root.open(a.relative, src: "a.jpg").get()
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
            switch root.open(source.relative, src: src) {
            case .success: Issue.record("\(src): the swapped link was followed out of the root")
            case .failure(let e): #expect(e.code == .forbiddenPath, "\(src): \(e)")
            }
        }
        // A file gone meanwhile is a 404, not a 403.
        try fm.removeItem(at: images.appendingPathComponent("a.jpg"))
        if case .failure(let e) = root.open(a.relative, src: "a.jpg") {
            #expect(e.code == .notFound)
        } else {
            Issue.record("a missing file opened")
        }
    }

    /// Defect 2: the root followed as its path names it now.
    @Test func aRootSymlinkFlippedOrAFolderRenamedAndReplacedIsFollowed() throws {
        let fm = FileManager.default
        let dir = fm.temporaryDirectory.appendingPathComponent("aspect-flip-\(UUID().uuidString)")
        defer { try? fm.removeItem(at: dir) }
        func folder(_ name: String, _ content: String) throws {
            try fm.createDirectory(at: dir.appendingPathComponent(name), withIntermediateDirectories: true)
            try Data(content.utf8).write(to: dir.appendingPathComponent("\(name)/a.jpg"))
        }
        func read(_ root: FolderSource) throws -> String {
            let file = try root.open(try root.confine("a.jpg").get().relative, src: "a.jpg").get()
            var buffer = [UInt8](repeating: 0, count: 16)
            let n = Glibc.read(file.fd, &buffer, 16)
            return String(decoding: buffer.prefix(max(0, n)), as: UTF8.self)
        }
        try folder("v1", "one")
        try folder("v2", "two")
        let link = dir.appendingPathComponent("current")
        try fm.createSymbolicLink(atPath: link.path, withDestinationPath: "v1")
        // A long interval: the flip is seen at once anyway, because the source would
        // otherwise be refused as leading outside the root.
        let linked = FolderSource(link.path, checkIntervalMs: 3_600_000)
        #expect(try read(linked) == "one")
        // Flipped atomically, as deployments and Kubernetes volumes do: a new link renamed over.
        try fm.createSymbolicLink(atPath: dir.appendingPathComponent("next").path, withDestinationPath: "v2")
        #expect(rename(dir.appendingPathComponent("next").path, link.path) == 0)
        #expect(try read(linked) == "two")

        // A folder renamed away and a new one put in its place: seen once the path is
        // resolved again (here on every use).
        try folder("images", "old")
        let images = dir.appendingPathComponent("images")
        let renamed = FolderSource(images.path, checkIntervalMs: 0)
        #expect(try read(renamed) == "old")
        #expect(rename(images.path, dir.appendingPathComponent("images.old").path) == 0)
        try folder("images", "new")
        #expect(try read(renamed) == "new")
        // And a root that is gone says so.
        try fm.removeItem(at: images)
        #expect(renamed.refresh(force: true).problem != nil)
        #expect(throws: (any Error).self) { try read(renamed) }
    }
}
