/// RFC 3986 percent-encoding, the one encoder of the service's side (the canonical form,
/// origin URLs, S3 keys): every byte of the UTF-8 form but the unreserved ones
/// (`A-Z a-z 0-9 - . _ ~`, and any the caller keeps) becomes `%XX`, in upper-case hex.
public enum PercentEncoding {
    public static func encode(_ s: String, keeping kept: Set<UInt8> = []) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for b in s.utf8 {
            if isUnreserved(b) || kept.contains(b) {
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
