import Core
import Foundation

/// The requests `aspect warm` makes (SPEC: Warming and batches): read from a list, or made
/// from sources and parameter lists.
public enum WarmRequests {
    /// Each line a request target or a whole URL; blank lines and `#` comments skipped.
    public static func targets(fromList text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).compactMap { raw in
            let line = raw.trimmingCharacters(in: .whitespaces)
            return line.isEmpty || line.hasPrefix("#") ? nil : line
        }
    }

    /// The target of a whole URL (`https://host/thumb?…` is `/thumb?…`); a target as it is.
    public static func target(of line: String) -> String {
        guard let scheme = line.range(of: "://"), !line.hasPrefix("/") else { return line }
        let rest = line[scheme.upperBound...]
        return rest.firstIndex(of: "/").map { String(rest[$0...]) } ?? "/"
    }

    /// Whether `line` is a whole URL (asked where it says) rather than a target.
    public static func isURL(_ line: String) -> Bool { line.hasPrefix("http://") || line.hasPrefix("https://") }

    /// `/thumb` queries for every source × every preset × the product of the flags' comma
    /// lists (`w=320,640` and `format=webp,avif`: four), in the order given: a source's
    /// requests together. Values are percent-encoded as the query needs.
    public static func queries(sources: [String], presets: [String], flags: [(name: String, values: [String])])
        -> [[(name: String, value: String)]]
    {
        var combos: [[(name: String, value: String)]] = [[]]
        for (name, values) in flags {
            combos = combos.flatMap { c in values.map { c + [(name, $0)] } }
        }
        let withPresets: [[(name: String, value: String)]] =
            presets.isEmpty ? combos : presets.flatMap { p in combos.map { [("preset", p)] + $0 } }
        return sources.flatMap { s in withPresets.map { [("src", s)] + $0 } }
    }

    static let keptInValues: Set<UInt8> = [UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: ",")]

    /// The query string of `pairs`, each value percent-encoded.
    public static func query(_ pairs: [(name: String, value: String)]) -> String {
        // Core's encoder; `/`, `:` and `,` kept, as paths, ratios and lists read better so.
        pairs.map { "\($0.name)=\(PercentEncoding.encode($0.value, keeping: Self.keptInValues))" }
            .joined(separator: "&")
    }

    /// The files under `root` whose path below it matches `pattern` (`*` any characters
    /// but `/`, `**` any folders, `?` one character), sorted; dotfiles and dot-folders are
    /// not searched (the service does not serve them).
    public static func sources(matching pattern: String, under root: String) -> [String] {
        let segments = pattern.split(separator: "/").map(String.init)
        var found: [String] = []
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        while let path = walker.nextObject() as? String {
            let name = (path as NSString).lastPathComponent
            if name.hasPrefix(".") {
                walker.skipDescendants()
                continue
            }
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDir), !isDir.boolValue
            else {
                continue
            }
            if matches(segments[...], path.split(separator: "/").map(String.init)[...]) { found.append(path) }
        }
        return found.sorted()
    }

    static func matches(_ pattern: ArraySlice<String>, _ path: ArraySlice<String>) -> Bool {
        guard let first = pattern.first else { return path.isEmpty }
        if first == "**" {
            // Any number of folders, none included.
            for skip in 0...path.count where matches(pattern.dropFirst(), path.dropFirst(skip)) { return true }
            return false
        }
        guard let name = path.first, glob(Array(first.utf8)[...], Array(name.utf8)[...]) else { return false }
        return matches(pattern.dropFirst(), path.dropFirst())
    }

    /// One segment: `*` any run, `?` one byte, anything else itself.
    static func glob(_ p: ArraySlice<UInt8>, _ s: ArraySlice<UInt8>) -> Bool {
        guard let c = p.first else { return s.isEmpty }
        if c == UInt8(ascii: "*") {
            for skip in 0...s.count where glob(p.dropFirst(), s.dropFirst(skip)) { return true }
            return false
        }
        guard let b = s.first, c == UInt8(ascii: "?") || c == b else { return false }
        return glob(p.dropFirst(), s.dropFirst())
    }
}
