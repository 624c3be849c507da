import Foundation
import TestSupport
import Testing

@testable import Configuration
@testable import Core

/// What the README and `docs/` say, held to the code: the worked examples are planned, the
/// configuration table is the key table, the parameter and error tables are the parser's
/// and the error type's, the architecture diagram is `Package.swift`'s, and every link,
/// script, test and metric the docs name exists.
@Suite struct DocsTests {
    // MARK: docs/api.md

    struct Example: CustomTestStringConvertible {
        let source: Size
        let query: String
        let output: Size?
        var testDescription: String { "\(source.width)×\(source.height) \(query)" }
    }

    static func size(_ text: String) -> Size? {
        let sides = text.split(separator: "×").compactMap { Int($0) }
        return sides.count == 2 ? Size(width: sides[0], height: sides[1]) : nil
    }

    static let examples: [Example] = {
        guard let table = try? Docs.table("docs/api.md", header: ["source", "query", "output", "what happens"])
        else { return [] }
        return table.rows.compactMap { row in
            guard row.count == 4, let source = size(row[0]), let query = Docs.code(row[1]) else { return nil }
            return Example(source: source, query: query, output: size(row[2]))
        }
    }()

    @Test func theWorkedExamplesAreAllThere() throws {
        let table = try Docs.table("docs/api.md", header: ["source", "query", "output", "what happens"])
        // Every row parsed: a row the parser above skipped would go unchecked.
        #expect(Self.examples.count == table.rows.count && table.rows.count >= 20)
        // An output is a size or the error's status, nothing else.
        for row in table.rows { #expect(Self.size(row[2]) != nil || row[2] == "400", "\(row)") }
    }

    @Test(arguments: examples)
    func aWorkedExampleIsWhatTheGeometryPlans(_ e: Example) {
        let planned: Result<Size, AspectError>
        do throws(AspectError) {
            let r = try ThumbRequest.parse(query: "src=photo.jpg&" + e.query, limits: defaultLimits)
            planned = try .success(Geometry.plan(source: e.source, request: r, limits: defaultLimits).output)
        } catch {
            planned = .failure(error)
        }
        switch planned {
        case .success(let output): #expect(output == e.output, "planned \(output.width)×\(output.height)")
        case .failure(let error): #expect(e.output == nil && error.code == .badParam, "\(error)")
        }
    }

    @Test func theParameterTableIsTheParsers() throws {
        let table = try Docs.table("docs/api.md", header: ["param", "values", "default", "meaning"])
        let documented = table.rows.flatMap { Docs.codes($0[0]) }
        // `preset` is expanded before the parser sees the request.
        #expect(Set(documented) == Set(ThumbRequest.parameterNames + ["preset"]))
        #expect(documented.count == Set(documented).count, "a parameter listed twice")
    }

    @Test func theErrorTableHasEveryCode() throws {
        let table = try Docs.table("docs/api.md", header: ["status", "code", "when"])
        let documented = table.rows.compactMap { Docs.code($0[1]) }
        #expect(documented.sorted() == AspectError.Code.allCases.map(\.rawValue).sorted())
    }

    // MARK: docs/configuration.md

    @Test func theConfigurationTableIsTheKeyTable() throws {
        let table = try Docs.table("docs/configuration.md", header: ["key", "default", "variable", "flag", "meaning"])
        let documented = table.rows.compactMap { Docs.code($0[0]) }
        #expect(documented == Config.keys.map(\.name), "the same keys, in the same order")
        for row in table.rows {
            guard let name = Docs.code(row[0]), let key = Config.keys.first(where: { $0.name == name }) else {
                continue
            }
            #expect(Docs.code(row[2]) == key.environmentName, "\(name)'s variable")
            let flag = ServeArguments.flags.first { $0.key == name }?.name
            #expect((Docs.code(row[3]) ?? row[3]) == (flag ?? "—"), "\(name)'s flag")
            // The documented default, applied as its variable would be, changes nothing.
            let text = row[1].hasPrefix("empty") ? "" : try #require(Docs.code(row[1]), "\(name): no default")
            var config = Config()
            let problem = key.apply(&config, .string(text), "")
            #expect(problem == nil, "\(name): the default '\(text)' is refused: \(problem ?? "")")
            #expect(
                key.read(config) == key.read(Config()),
                "\(name): the docs say '\(text)', the code's default is '\(key.read(Config()))'")
        }
    }

    // MARK: docs/design.md

    /// `Package.swift`'s targets and the targets each depends on.
    static func packageArrows() throws -> Set<String> {
        let manifest = try String(contentsOf: Docs.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        var arrows: Set<String> = []
        let pattern = #"\.(?:target|executableTarget)\(\s*name:\s*"([^"]+)"(?:,\s*dependencies:\s*\[([^\]]*)\])?"#
        // TestSupport and ImagingTestSupport are the tests' own libraries, not the service's.
        for m in Docs.matches(pattern, in: manifest) where !m[1].hasSuffix("TestSupport") {
            for dep in Docs.matches(#""([^"]+)""#, in: m[2]) { arrows.insert("\(m[1]) --> \(dep[1])") }
        }
        return arrows
    }

    @Test func theDiagramsArrowsArePackageSwifts() throws {
        let design = try Docs.text("docs/design.md")
        let mermaid = try #require(Docs.blocks(design).first { $0.language == "mermaid" })
        let drawn = Set(
            mermaid.lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.contains(" --> ") })
        let declared = try Self.packageArrows()
        #expect(declared.count >= 30, "\(declared.count) arrows read from Package.swift")
        #expect(drawn.subtracting(declared).isEmpty, "drawn, not in Package.swift: \(drawn.subtracting(declared))")
        #expect(declared.subtracting(drawn).isEmpty, "in Package.swift, not drawn: \(declared.subtracting(drawn))")
    }

    // MARK: every document

    /// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens.
    static func anchor(_ heading: String) -> String {
        String(
            heading.lowercased().compactMap { c -> Character? in
                if c == " " { return "-" }
                return c.isLetter || c.isNumber || c == "-" || c == "_" ? c : nil
            })
    }

    @Test(arguments: Docs.files)
    func everyRelativeLinkLeadsToAFileAndHeading(_ path: String) throws {
        let text = try Docs.text(path)
        let folder = (path as NSString).deletingLastPathComponent
        for m in Docs.matches(#"\]\(([^)\s]+)\)"#, in: text) where !m[1].hasPrefix("http") {
            let parts = m[1].split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let target =
                parts[0].isEmpty
                ? path
                : ((folder as NSString).appendingPathComponent(parts[0]) as NSString)
                    .standardizingPath
            let exists = FileManager.default.fileExists(atPath: Docs.root.appendingPathComponent(target).path)
            #expect(exists, "\(path): \(m[1]) leads nowhere")
            guard exists, parts.count == 2, target.hasSuffix(".md") else { continue }
            let headings = Docs.matches(#"(?m)^#+ (.+)$"#, in: try Docs.text(target)).map { Self.anchor($0[1]) }
            #expect(headings.contains(parts[1]), "\(path): \(m[1]) names no heading of \(target)")
        }
    }

    @Test(arguments: Docs.files)
    func everyScriptNamedExists(_ path: String) throws {
        for m in Docs.matches(#"bash ([A-Za-z0-9_./-]+\.sh)"#, in: try Docs.text(path)) {
            #expect(
                FileManager.default.fileExists(atPath: Docs.root.appendingPathComponent(m[1]).path), "\(path): \(m[1])")
        }
    }

    /// Every test source, read once for all the documents.
    static let testSources = Docs.swiftFiles(under: "Tests").map(\.text).joined(separator: "\n")

    @Test(arguments: Docs.files)
    func everyTestNamedExists(_ path: String) throws {
        let tests = Self.testSources
        for m in Docs.matches(#"`([A-Z][A-Za-z]*Tests)(?:\.([A-Za-z]+))?`"#, in: try Docs.text(path)) {
            #expect(tests.contains("struct \(m[1]) "), "\(path): no suite \(m[1])")
            if !m[2].isEmpty { #expect(tests.contains("func \(m[2])("), "\(path): no test \(m[1]).\(m[2])") }
        }
    }

    @Test func securityNamesATestForEveryCheck() throws {
        let table = try Docs.table("docs/security.md", header: ["#", "check", "limit (key)", "on failure", "shown by"])
        #expect(table.rows.count >= 20)
        for row in table.rows { #expect(Docs.codes(row[4]).contains { $0.contains("Tests.") }, "\(row[1])") }
    }

    /// The metric names the service writes, histograms without their suffixes.
    static func metricNames() -> Set<String> {
        let service = Docs.swiftFiles(under: "Sources/Service").map(\.text).joined(separator: "\n")
        return Set(
            Docs.matches(#"aspect_[a-z_]+"#, in: service).map {
                $0[0].replacingOccurrences(of: #"_(bucket|sum|count)$"#, with: "", options: .regularExpression)
            })
    }

    @Test func everyMetricIsDocumentedAndEveryDocumentedMetricIsReal() throws {
        let real = Self.metricNames()
        #expect(real.count >= 20, "\(real.sorted())")
        let operations = try Docs.text("docs/operations.md")
        for name in real { #expect(operations.contains("`\(name)`"), "operations.md does not list \(name)") }
        for path in Docs.files {
            // A name that starts a word (imgproxy's `extend_aspect_ratio` is no metric).
            for m in Docs.matches(#"(?<![a-z_])aspect_[a-z_]*[a-z]"#, in: try Docs.text(path)) {
                #expect(real.contains(m[0]), "\(path) names \(m[0]), which the service does not write")
            }
        }
    }
}
