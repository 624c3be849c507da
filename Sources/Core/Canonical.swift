/// The canonical form of a parameter list, the basis of signatures and cache keys:
/// sorted by name (then value), each `name=value` percent-encoded with only RFC 3986's
/// unreserved characters left bare (`A-Z a-z 0-9 - . _ ~`), joined by `&`.
public enum Canonical {
    public static func form(_ pairs: [(name: String, value: String)]) -> String {
        pairs
            .map { (PercentEncoding.encode($0.name), PercentEncoding.encode($0.value)) }
            .sorted {
                $0.0 != $1.0
                    ? $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) : $0.1.utf8.lexicographicallyPrecedes($1.1.utf8)
            }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }
}
