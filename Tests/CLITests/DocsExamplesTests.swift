import Core
import Foundation
import Imaging
import TestSupport
import Testing

@testable import Service

/// Every `curl` line of the README and `docs/`, run against the real binary serving the
/// sample images: the status, the format its `-o` file names, the size and error code its
/// comment names, and the JSON shown after it must be what the service answers.
@Suite(.serialized) struct DocsExamplesTests {
    /// One `curl` line of the docs, taken apart.
    struct CurlLine: CustomStringConvertible {
        var file: String
        var text: String
        var target = ""
        var head = false
        var headers: [String: String] = [:]
        var output: String?
        var comment = ""
        /// The JSON block the docs show right after this line's block, when it is alone there.
        var json: String?
        var description: String { "\(file): \(text)" }
    }

    /// A line split as the shell would: quotes, `$NAME` in double quotes, a `#` comment.
    static func words(_ line: String, _ variables: [String: String]) -> (words: [String], comment: String) {
        var words: [String] = []
        var word: String?
        var quote: Character?
        var chars = Array(line)[...]
        while let c = chars.popFirst() {
            if let q = quote {
                if c == q {
                    quote = nil
                } else if q == "\"", c == "$" {
                    let name = String(chars.prefix { $0.isLetter || $0.isNumber || $0 == "_" })
                    chars = chars.dropFirst(name.count)
                    word = (word ?? "") + (variables[name] ?? "")
                } else {
                    word = (word ?? "") + String(c)
                }
            } else if c == "'" || c == "\"" {
                quote = c
                word = word ?? ""
            } else if c == " " || c == "\t" {
                if let w = word { words.append(w) }
                word = nil
            } else if c == "#", word == nil {
                return (words, String(chars).trimmingCharacters(in: .whitespaces))
            } else {
                word = (word ?? "") + String(c)
            }
        }
        if let w = word { words.append(w) }
        return (words, "")
    }

    /// One command of the docs' `sh` blocks, split as the shell would.
    struct Command {
        var file: String
        var text: String
        var words: [String]
        var comment: String
        /// The JSON block the docs show right after this command's block, when it is alone there.
        var json: String?
    }

    /// Every command of the README's and the docs' `sh` blocks; a block's `NAME='…'` lines
    /// set variables for the commands after them, starting from `given`.
    static func commands(_ given: [String: String] = [:]) throws -> [Command] {
        var commands: [Command] = []
        for file in Docs.files {
            let blocks = Docs.blocks(try Docs.text(file))
            for (i, block) in blocks.enumerated() where block.language == "sh" {
                var variables = given
                var found: [Command] = []
                for text in block.lines {
                    let (words, comment) = words(text, variables)
                    if words.count == 1, let eq = words[0].firstIndex(of: "=") {
                        variables[String(words[0][..<eq])] = String(words[0][words[0].index(after: eq)...])
                    } else if !words.isEmpty {
                        found.append(Command(file: file, text: text, words: words, comment: comment))
                    }
                }
                if found.count == 1, i + 1 < blocks.count, blocks[i + 1].language == "json" {
                    found[0].json = blocks[i + 1].lines.joined(separator: "\n")
                }
                commands += found
            }
        }
        return commands
    }

    static func curlLines() throws -> [CurlLine] {
        try commands().filter { $0.words.first == "curl" }.map { command in
            var line = CurlLine(file: command.file, text: command.text, comment: command.comment, json: command.json)
            var rest = command.words.dropFirst()[...]
            while let w = rest.popFirst() {
                switch w {
                case "-o": line.output = rest.popFirst()
                case "-H":
                    let h = (rest.popFirst() ?? "").split(separator: ":", maxSplits: 1).map {
                        $0.trimmingCharacters(in: .whitespaces)
                    }
                    if h.count == 2 { line.headers[h[0]] = h[1] }
                case _ where w.hasPrefix("-"): line.head = line.head || w.contains("I")
                default: line.target = w
                }
            }
            return line
        }
    }

    static let types = ["jpg": "image/jpeg", "png": "image/png", "webp": "image/webp", "gif": "image/gif"]

    @Test func everyCurlLineOfTheDocsAnswersAsItsCommentSays() throws {
        let lines = try Self.curlLines()
        // The README's tour and the API's examples, at least: a parser that found none
        // would check nothing.
        #expect(lines.filter { $0.file == "README.md" }.count >= 8)
        #expect(lines.count >= 25, "\(lines.count) curl lines found")
        #expect(lines.contains { $0.json != nil })

        let dir = try ServeProcess.sampleFolder("docs")
        defer { try? FileManager.default.removeItem(at: dir) }
        // The embedded default's presets, as `bash scripts/run.sh` serves them.
        let config = try JSONSerialization.jsonObject(
            with: Data(contentsOf: Docs.root.appendingPathComponent("config.json")))
        let presets = try JSONSerialization.data(withJSONObject: (config as? [String: Any])?["presets"] ?? [:])
        let serve = try ServeProcess(samples: dir, env: ["ASPECT_PRESETS": String(decoding: presets, as: UTF8.self)])
        let thumbnailer = try Thumbnailer(limits: ImagingLimits())
        for line in lines {
            let base = "http://127.0.0.1:8080"
            guard line.target.hasPrefix(base + "/") else {
                Issue.record("\(line): not a URL of the local service")
                continue
            }
            let r = try ServiceTests.get(
                serve.port, String(line.target.dropFirst(base.count)), headers: line.headers,
                method: line.head ? "HEAD" : "GET")
            // An error's status is in the comment, or in the JSON the docs show after the line.
            let status =
                Docs.matches(#""status": (\d+)"#, in: line.comment + (line.json ?? "")).first.flatMap { Int($0[1]) }
                ?? 200
            #expect(r.status == status, "\(line): \(r.status) \(r.text.prefix(200))")
            // Each whole `"name": value` the comment quotes is in the answer as written.
            for pair in Docs.matches(#""[A-Za-z]+": ("[^"…]*"|[0-9.]+)(?=[,}])"#, in: line.comment) {
                #expect(r.text.contains(pair[0]), "\(line): no \(pair[0]) in \(r.text)")
            }
            if let output = line.output, let ext = output.split(separator: ".").last {
                #expect(r.headers["content-type"] == Self.types[String(ext)], "\(line): \(r.headers)")
            }
            if let m = Docs.matches(#"(\d+)×(\d+)"#, in: line.comment).first, r.status == 200, !line.head {
                let file = dir.appendingPathComponent("answer")
                try Data(r.body).write(to: file)
                let info = try thumbnailer.probe(path: file.path)
                #expect("\(info.size.width)×\(info.size.height)" == m[0], "\(line)")
                if line.comment.contains("every frame") { #expect(info.frames > 1, "\(line): \(info.frames) frames") }
            }
            if let json = line.json {
                let shown = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? NSDictionary
                let served = try JSONSerialization.jsonObject(with: Data(r.body)) as? NSDictionary
                #expect(shown != nil && shown == served, "\(line): the docs show \(json), the service said \(r.text)")
            }
        }
    }

    /// Every `aspect thumb` and `aspect sign` line of the docs, run in the samples folder: it
    /// exits 0, and a thumbnail is written at the size its comment names.
    @Test func everyAspectCommandOfTheDocsRuns() throws {
        let dir = try ServeProcess.sampleFolder("docs")
        defer { try? FileManager.default.removeItem(at: dir) }
        let images = dir.appendingPathComponent("images")
        let thumbnailer = try Thumbnailer(limits: ImagingLimits())
        var ran = 0
        for command in try Self.commands(["KEY": "a-signing-key-of-32-characters!"]) {
            let (words, text, file) = (command.words, command.text, command.file)
            guard words.first == "aspect", ["thumb", "sign"].contains(words.dropFirst().first) else { continue }
            ran += 1
            let r = try Binary.run(Array(words.dropFirst()), cwd: images)
            #expect(r.status == 0, "\(file): \(text): \(r.stderr)")
            if words[1] == "sign" {
                #expect(r.stdout.contains("&sig="), "\(file): \(text): \(r.stdout)")
            } else if let m = Docs.matches(#"(\d+)×(\d+)"#, in: command.comment).first {
                let info = try thumbnailer.probe(path: images.appendingPathComponent(words[3]).path)
                #expect("\(info.size.width)×\(info.size.height)" == m[0], "\(file): \(text)")
            }
        }
        #expect(ran >= 3, "\(ran) aspect commands found")
    }

    /// The API's error table: each code's status is the one the service answers with, and
    /// the HTTP layer's rows are the answers it writes itself.
    @Test func theErrorTablesAreTheStatusesTheServiceAnswers() throws {
        let tables = Docs.tables(try Docs.text("docs/api.md")).filter { $0.header == ["status", "code", "when"] }
        #expect(tables.count == 2)
        let service = tables.first?.rows ?? []
        for row in service {
            let code = try #require(Docs.code(row[1]).flatMap(AspectError.Code.init(rawValue:)), "\(row)")
            #expect(Int(row[0]) == code.status, "\(row[1]): the docs say \(row[0]), the service answers \(code.status)")
        }
        let http = Docs.swiftFiles(under: "Sources/HTTP").map(\.text).joined(separator: "\n")
        let written = Set(
            Docs.matches(#"(\d{3}),\s*"([a-z_]+)""#, in: http).map { "\($0[1]) \($0[2])" })
        let documented = Set((tables.last?.rows ?? []).map { "\($0[0]) \(Docs.code($0[1]) ?? "")" })
        #expect(written.count >= 9)
        #expect(
            documented == written,
            "documented only: \(documented.subtracting(written)); written only: \(written.subtracting(documented))")
    }
}
