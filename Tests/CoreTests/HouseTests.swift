import Foundation
import TestSupport
import Testing

/// The rules of the house that the compiler does not hold (docs/design.md): Core names no
/// dialect, each C library has one Swift owner, no function runs past 100 lines, and every
/// target has its row in design.md.
@Suite struct HouseTests {
    /// Every Swift file under `folder` (relative to the root), as (path, text).
    static func swiftFiles(under folder: String) throws -> [(path: String, text: String)] {
        let base = Docs.root.appendingPathComponent(folder)
        guard let walk = FileManager.default.enumerator(atPath: base.path) else { return [] }
        var files: [(String, String)] = []
        for case let name as String in walk where name.hasSuffix(".swift") {
            files.append(
                ("\(folder)/\(name)", try String(contentsOf: base.appendingPathComponent(name), encoding: .utf8)))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    /// The targets under Sources: each folder is one.
    static func targets() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: Docs.root.appendingPathComponent("Sources").path).sorted()
    }

    @Test func coreNamesNoDialect() throws {
        let core = try Self.swiftFiles(under: "Sources/Core")
        #expect(core.count > 20)
        for (path, text) in core {
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let lower = line.lowercased()
                #expect(!lower.contains("imgproxy") && !lower.contains("thumbor"), "\(path):\(n + 1): \(line)")
            }
        }
    }

    /// A C shim target (`C…` under Sources) is imported by one Swift target, and there as
    /// `internal import`, so its declarations cannot leak into a second one. `CLinux` is
    /// the exception, as swift-nio's `CNIOLinux` is: Linux calls Glibc does not import,
    /// with no library behind them, used where the calls are made (still `internal`).
    @Test func eachCLibraryHasOneOwner() throws {
        let shims = try Self.targets().filter { $0.hasPrefix("C") && $0.dropFirst().first?.isUppercase == true }
        #expect(shims.count >= 8, "\(shims)")
        var owners: [String: Set<String>] = [:]
        var leaks: [String] = []
        for target in try Self.targets() {
            for (path, text) in try Self.swiftFiles(under: "Sources/\(target)") {
                for line in text.split(separator: "\n") {
                    let words = line.split(separator: " ").map(String.init)
                    guard let i = words.firstIndex(of: "import"), i + 1 < words.count, shims.contains(words[i + 1])
                    else { continue }
                    owners[words[i + 1], default: []].insert(target)
                    if words.first != "internal" && words.first != "private" && words.first != "fileprivate" {
                        leaks.append("\(path): \(line)")
                    }
                }
            }
        }
        for (shim, targets) in owners.sorted(by: { $0.key < $1.key }) where shim != "CLinux" {
            #expect(targets.count == 1, "\(shim) is imported by \(targets.sorted())")
        }
        #expect(leaks.isEmpty, "a C module imported without `internal`: \(leaks)")
    }

    /// The functions, initialisers and subscripts of a Swift file that run past `limit`
    /// lines, from the line that declares them to the brace that closes their body.
    static func longFunctions(_ text: String, limit: Int) -> [(line: Int, length: Int, head: String)] {
        let declaration =
            #"^(@\w+(\([^)]*\))?\s+)*((public|private|fileprivate|internal|package|static|override|mutating|nonisolated|final|class)\s+)*(func\s|init[?(<]|subscript[(<])"#
        var found: [(Int, Int, String)] = []
        var open: [(line: Int, depth: Int, head: String, opened: Bool)] = []
        var depth = 0
        var inBlockString = false
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = raw.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("//") { continue }
            if !inBlockString, trimmed.range(of: declaration, options: .regularExpression) != nil {
                // One before it at this depth that never opened a body was a requirement.
                while let last = open.last, !last.opened, last.depth == depth { open.removeLast() }
                open.append((n, depth, trimmed, false))
            }
            var inString = false
            var escaped = false
            var previous: Character = " "
            for c in raw {
                defer { previous = c }
                if escaped {
                    escaped = false
                    continue
                }
                if c == "\\" && (inString || inBlockString) {
                    escaped = true
                    continue
                }
                if c == "\"" {
                    // A line that opens or closes a block string is counted once, below.
                    if !inBlockString { inString.toggle() }
                    continue
                }
                if inString || inBlockString { continue }
                if c == "/" && previous == "/" { break }
                if c == "{" {
                    depth += 1
                    if let last = open.last, !last.opened, depth == last.depth + 1 {
                        open[open.count - 1].opened = true
                    }
                } else if c == "}" {
                    depth -= 1
                    if let last = open.last, last.opened, depth == last.depth {
                        let length = n - last.line + 1
                        if length > limit { found.append((last.line + 1, length, last.head)) }
                        open.removeLast()
                    }
                }
            }
            if raw.components(separatedBy: "\"\"\"").count % 2 == 0 { inBlockString.toggle() }
        }
        return found
    }

    @Test func noFunctionRunsPast100Lines() throws {
        let sample = "func a() {\n" + String(repeating: "    x()\n", count: 120) + "}\nfunc b() {\n}\n"
        #expect(Self.longFunctions(sample, limit: 100).map(\.length) == [122], "the counter counts")
        var long: [String] = []
        for (path, text) in try Self.swiftFiles(under: "Sources") {
            for f in Self.longFunctions(text, limit: 100) {
                long.append("\(path):\(f.line) \(f.length) lines: \(f.head)")
            }
        }
        #expect(long.isEmpty, "\(long.joined(separator: "\n"))")
    }

    /// design.md names every command of the executable.
    @Test func everyCommandIsInDesign() throws {
        let main = try Docs.text("Sources/Server/main.swift")
        let commands = main.split(separator: "\n").compactMap { line -> String? in
            let t = line.trimmingCharacters(in: .whitespaces)
            guard t.hasPrefix("case \""), let end = t.dropFirst(6).firstIndex(of: "\"") else { return nil }
            return String(t.dropFirst(6)[..<end])
        }
        #expect(commands.count >= 9, "\(commands)")
        let design = try Docs.text("docs/design.md")
        for command in commands { #expect(design.contains("`\(command)`"), "docs/design.md does not name \(command)") }
    }

    /// design.md's table of targets has a row for every folder under Sources.
    @Test func everyTargetHasARowInDesign() throws {
        let design = try Docs.text("docs/design.md")
        let rows = design.split(separator: "\n").filter { $0.hasPrefix("| `") }.map { String($0) }
        for target in try Self.targets() {
            #expect(rows.contains { $0.contains("`\(target)`") }, "docs/design.md has no row for \(target)")
        }
    }
}
