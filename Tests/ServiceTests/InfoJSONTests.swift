import Foundation
import Testing

/// `/info`'s JSON stays valid whatever its strings hold: a source's format (a name a
/// loader gives), a video's codec (FFmpeg's), colours and hashes all go through one
/// escaping writer, so a quote, a backslash or a control character cannot break it.
@Suite struct InfoJSONTests {
    /// Every character that needs escaping, and some that do not.
    static let nasty = "a\"b\\c/d\u{1}e\u{8}f\u{c}g\nh\ri\tj\u{1f}k\u{7f}l\u{e9}m\u{1F600}"

    @Test func aSourcesFormatWithQuotesBackslashesAndControlCharactersStaysValidJSON() throws {
        let h = try Harness()
        // The script renderer takes the second word as the format: no spaces in it.
        let format = Self.nasty.replacingOccurrences(of: " ", with: "")
        try h.sources.put("odd.bin", "40x30 \(format)")
        let answer = h.get("/info?src=odd.bin")
        #expect(answer.status == 200, "\(answer.text)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any], "\(answer.text)")
        let source = try #require(object["source"] as? [String: Any])
        #expect(source["format"] as? String == format)
        #expect(source["width"] as? Int == 40 && object["thumbhash"] is String && object["blurhash"] is String)
        // Every key in SPEC's order, as before.
        let keys = ["source", "ratio", "thumbhash", "blurhash", "averageColor", "dominantColor"]
        let positions = keys.map { answer.text.range(of: "\"\($0)\"")?.lowerBound }
        #expect(
            positions.allSatisfy { $0 != nil } && positions.compactMap { $0 } == positions.compactMap { $0 }.sorted())
    }
}
