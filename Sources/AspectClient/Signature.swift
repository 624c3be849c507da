import Foundation

#if canImport(CryptoKit)
    import CryptoKit
#endif

/// Aspect's signed URLs, the same way the server checks them (SPEC, Signed URLs):
/// `sig = base64url_nopad(HMAC-SHA256(key, "/thumb?" + canonical))`.
public enum Signature {
    /// The canonical form: sorted by name (then value), each `name=value` percent-encoded
    /// with only RFC 3986's unreserved characters left bare, joined by `&`.
    public static func canonical(_ pairs: [(String, String)]) -> String {
        pairs.map { (encode($0.0), encode($0.1)) }
            .sorted {
                $0.0 != $1.0
                    ? Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8))
                    : Array($0.1.utf8).lexicographicallyPrecedes(Array($1.1.utf8))
            }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    /// The signature of `message` (`/thumb?` + canonical) under `key`.
    public static func sign(_ message: String, key: String) -> String {
        base64URL(hmacSHA256(key: Array(key.utf8), message: Array(message.utf8)))
    }

    static func encode(_ s: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for b in s.utf8 {
            switch b {
            case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(b)
            default:
                out += [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// HMAC-SHA256: CryptoKit's where the platform has it, else RFC 2104 over `SHA256`.
    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        #if canImport(CryptoKit)
            return Array(HMAC<CryptoKit.SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
        #else
            return HMACSHA256.mac(key: key, message: message)
        #endif
    }
}
