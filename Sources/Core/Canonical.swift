/// The canonical form of a parameter list, the basis of signatures and cache keys:
/// sorted by name (then value), each `name=value` percent-encoded with only RFC 3986's
/// unreserved characters left bare (`A-Z a-z 0-9 - . _ ~`), joined by `&`.
public enum Canonical {
    public static func form(_ pairs: [(name: String, value: String)]) -> String {
        pairs
            .map { (encode($0.name), encode($0.value)) }
            .sorted {
                $0.0 != $1.0
                    ? $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) : $0.1.utf8.lexicographicallyPrecedes($1.1.utf8)
            }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    /// Percent-encodes every byte of the UTF-8 form except the unreserved ones, in
    /// upper-case hex.
    public static func encode(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for b in s.utf8 {
            if isUnreserved(b) {
                out.unicodeScalars.append(Unicode.Scalar(b))
            } else {
                out += "%"
                out.unicodeScalars.append(hexDigit(b >> 4))
                out.unicodeScalars.append(hexDigit(b & 0xF))
            }
        }
        return out
    }

    private static func isUnreserved(_ b: UInt8) -> Bool {
        switch b {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    private static func hexDigit(_ n: UInt8) -> Unicode.Scalar {
        Unicode.Scalar(n < 10 ? 0x30 + n : 0x41 + n - 10)
    }
}
