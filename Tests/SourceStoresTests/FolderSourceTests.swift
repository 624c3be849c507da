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

    /// `images.watchChanges`: the stamp a hit relies on instead of a stat(2) holds while
    /// nothing changes and moves with every kind of change, at once (no waiting for a
    /// watcher), including inside a folder put in place of a watched one.
    @Test func theChangeStampHoldsWhileNothingChangesAndMovesWithEveryChange() throws {
        let fm = FileManager.default
        let dir = fm.temporaryDirectory.appendingPathComponent("aspect-watch-\(UUID().uuidString)")
        defer { try? fm.removeItem(at: dir) }
        let images = dir.appendingPathComponent("images")
        let sub = images.appendingPathComponent("sub")
        try fm.createDirectory(at: sub, withIntermediateDirectories: true)
        try fm.createDirectory(at: images.appendingPathComponent("other"), withIntermediateDirectories: true)
        let file = sub.appendingPathComponent("a.jpg")
        try Data("one".utf8).write(to: file)
        let root = FolderSource(images.path, checkIntervalMs: 3_600_000)
        guard case .ready(var known) = root.resolve("sub/a.jpg") else {
            Issue.record("sub/a.jpg did not resolve")
            return
        }

        /// Reads the stamp, checks the identity as a hit does, and says whether the stamp
        /// then holds; then makes `change` and says whether the stamp moved.
        func moves(_ what: String, _ change: () throws -> Void) throws {
            guard let before = root.changeStamp() else {
                Issue.record("\(what): no stamp")
                return
            }
            if !root.isCurrent(known), case .ready(let now) = root.resolve("sub/a.jpg") { known = now }
            #expect(root.changeStamp() == before, "\(what): the stamp moved with nothing changed")
            try change()
            #expect(root.changeStamp() != before, "\(what): the stamp did not move")
        }
        try moves("written in place") { try Data("two!".utf8).write(to: file) }
        try moves("touched") {
            var times = [timespec(tv_sec: 1_000, tv_nsec: 0), timespec(tv_sec: 1_000, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, file.path, &times, 0) == 0)
        }
        try moves("renamed over") {
            try Data("three".utf8).write(to: sub.appendingPathComponent(".next"))
            #expect(rename(sub.appendingPathComponent(".next").path, file.path) == 0)
        }
        try moves("removed") { try fm.removeItem(at: file) }
        try Data("four".utf8).write(to: file)
        try moves("its folder renamed away and replaced") {
            #expect(rename(sub.path, images.appendingPathComponent("sub.old").path) == 0)
            try fm.createDirectory(at: sub, withIntermediateDirectories: true)
            try Data("five!".utf8).write(to: file)
        }
        // The folder put in its place is watched in turn once the source is checked again.
        try moves("written in the new folder") { try Data("six".utf8).write(to: file) }

        // A change in a folder no source was resolved from moves nothing.
        _ = root.isCurrent(known)
        let settled = root.changeStamp()
        try Data("x".utf8).write(to: images.appendingPathComponent("other/b.jpg"))
        #expect(settled != nil && root.changeStamp() == settled)

        // Off: no stamp, every hit stat(2)s.
        #expect(FolderSource(images.path, watchChanges: false).changeStamp() == nil)
        // A root due to be resolved again (checkIntervalMs 0: every request) gives none either.
        #expect(FolderSource(images.path, checkIntervalMs: 0).changeStamp() == nil)
    }
}
