import Foundation

/// The repository's Markdown: the README, every file of `docs/` and the benchmarks, read by the doc tests
/// so that what the docs say is held to the code.
public enum Docs {
    /// The repository's root folder.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `README.md` and `docs/*.md`, as paths relative to the root.
    public static var files: [String] {
        let docs =
            (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)) ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    /// A file's text, by its path relative to the root.
    public static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// A Markdown table: its header cells and its rows' cells, trimmed.
    public struct Table: Sendable {
        public let header: [String]
        public let rows: [[String]]
    }

    /// Every table of a document, outside code blocks.
    public static func tables(_ text: String) -> [Table] {
        var tables: [Table] = []
        var current: [[String]] = []
        func flush() {
            // A header, the `|---|` line, then the rows.
            if current.count >= 2 { tables.append(Table(header: current[0], rows: Array(current.dropFirst(2)))) }
            current = []
        }
        var fenced = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { fenced.toggle() }
            guard !fenced, line.hasPrefix("|") else {
                flush()
                continue
            }
            current.append(cells(String(line)))
        }
        flush()
        return tables
    }

    /// The cells of one table line.
    static func cells(_ line: String) -> [String] {
        var parts = line.split(separator: "|", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        if parts.first == "" { parts.removeFirst() }
        if parts.last == "" { parts.removeLast() }
        return parts
    }

    /// A fenced code block: the language after the fence, and its lines.
    public struct Block: Sendable {
        public let language: String
        public let lines: [String]
    }

    /// Every fenced code block of a document, in order.
    public static func blocks(_ text: String) -> [Block] {
        var blocks: [Block] = []
        var language: String?
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") {
                if let open = language {
                    blocks.append(Block(language: open, lines: lines))
                    language = nil
                } else {
                    language = String(line.dropFirst(3)).trimmingCharacters(in: .whitespaces)
                    lines = []
                }
            } else if language != nil {
                lines.append(line)
            }
        }
        return blocks
    }

    /// The text between the first pair of backticks in `cell`, or nil.
    public static func code(_ cell: String) -> String? {
        let parts = cell.split(separator: "`", omittingEmptySubsequences: false)
        return parts.count >= 3 ? String(parts[1]) : nil
    }

    /// Every text between backticks in `cell`.
    public static func codes(_ cell: String) -> [String] {
        let parts = cell.split(separator: "`", omittingEmptySubsequences: false)
        return stride(from: 1, to: parts.count - 1, by: 2).map { String(parts[$0]) }
    }

    /// The first table whose header is `header`, in the document at `path`.
    public static func table(_ path: String, header: [String]) throws -> Table {
        guard let t = tables(try text(path)).first(where: { $0.header == header }) else {
            throw TestError("\(path) has no table headed \(header)")
        }
        return t
    }

    /// Matches of `pattern` in `text`: each match's capture groups (group 0 first).
    public static func matches(_ pattern: String, in text: String) -> [[String]] {
        guard let re = try? NSRegularExpression(pattern: pattern) else { return [] }
        let ns = text as NSString
        return re.matches(in: text, range: NSRange(location: 0, length: ns.length)).map { m in
            (0..<m.numberOfRanges).map { i in
                m.range(at: i).location == NSNotFound ? "" : ns.substring(with: m.range(at: i))
            }
        }
    }

    /// The Swift files under `folder` of the repository, each with its text.
    public static func swiftFiles(under folder: String) -> [(path: String, text: String)] {
        let base = root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(atPath: base.path) else { return [] }
        return walker.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted().compactMap { rel in
            (try? String(contentsOf: base.appendingPathComponent(rel), encoding: .utf8)).map {
                (folder + "/" + rel, $0)
            }
        }
    }
}
