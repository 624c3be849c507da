/// RFC 3986 percent-encoding, the one encoder and the one decoder of the service's side:
/// the canonical form, origin URLs and S3 keys are encoded here; a request's path, its
/// query's names and values, and a dialect URL's source are decoded here.
public enum PercentEncoding {
    /// Every byte of the UTF-8 form but the unreserved ones (`A-Z a-z 0-9 - . _ ~`, and any
    /// the caller keeps) becomes `%XX`, in upper-case hex.
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

    /// Why a text could not be decoded.
    public enum DecodingError: Error, Equatable, Sendable {
        /// A `%` not followed by two hex digits.
        case brokenEscape
        /// The bytes decoded are not UTF-8.
        case notUTF8
    }

    /// `%XX` made the byte it names; `plusAsSpace`: `+` a space too, as a form-encoded query
    /// has it (in a path a `+` is a `+`).
    public static func decode(_ text: Substring, plusAsSpace: Bool = false) throws(DecodingError) -> String {
        let bytes = text.utf8
        let percent = UInt8(ascii: "%")
        let plus = UInt8(ascii: "+")
        if !bytes.contains(percent), !(plusAsSpace && bytes.contains(plus)) { return String(text) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var it = bytes.makeIterator()
        while let c = it.next() {
            if c == percent {
                guard let h = it.next(), let l = it.next(), let hi = hexDigitValue(h), let lo = hexDigitValue(l) else {
                    throw .brokenEscape
                }
                out.append(hi << 4 | lo)
            } else {
                out.append(plusAsSpace && c == plus ? UInt8(ascii: " ") : c)
            }
        }
        guard let s = String(validating: out, as: UTF8.self) else { throw .notUTF8 }
        return s
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
