/// A query string split into decoded `name=value` pairs, in the order given.
///
/// `&` separates pairs (empty pieces, as in a trailing `&`, are skipped); the first `=`
/// separates name from value; `%XX` escapes and `+` (a space, as in HTML forms) are
/// decoded, and the result must be UTF-8.
public struct QueryParameters: Equatable, Sendable {
    public var pairs: [(name: String, value: String)]

    public init(pairs: [(name: String, value: String)]) { self.pairs = pairs }

    /// Decodes a raw query (the part after `?`, still percent-encoded).
    public static func decode(_ query: some StringProtocol) throws(AspectError) -> QueryParameters {
        var pairs: [(name: String, value: String)] = []
        for piece in Substring(query).utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let eq = piece.firstIndex(of: UInt8(ascii: "="))
            let rawName = eq.map { piece[piece.startIndex..<$0] } ?? piece[...]
            let rawValue = eq.map { piece[piece.index(after: $0)...] } ?? piece[piece.endIndex...]
            let name = try percentDecode(rawName, what: "a parameter name")
            let value = try percentDecode(rawValue, what: "the value of '\(name)'")
            pairs.append((name, value))
        }
        return QueryParameters(pairs: pairs)
    }

    /// Every pair but those named `excluded`, as `canonical` lists them.
    public func canonical(excluding excluded: Set<String> = ["sig"]) -> String {
        Canonical.form(pairs.filter { !excluded.contains($0.name) })
    }

    public static func == (a: QueryParameters, b: QueryParameters) -> Bool {
        a.pairs.elementsEqual(b.pairs) { $0.name == $1.name && $0.value == $1.value }
    }

    static func percentDecode(_ bytes: Substring.UTF8View.SubSequence, what: String) throws(AspectError) -> String {
        do throws(PercentEncoding.DecodingError) {
            return try PercentEncoding.decode(Substring(bytes), plusAsSpace: true)
        } catch .brokenEscape {
            throw .badParam("\(what) has a broken percent escape: '%' must be followed by two hex digits")
        } catch {
            throw .badParam("\(what) is not valid UTF-8 once percent-decoded")
        }
    }
}
