import Core
import Foundation
import Hashing

/// SPEC's signed URLs: `sig = base64url_nopad(HMAC-SHA256(key, "/thumb?" + canonical))`,
/// where `canonical` is every parameter as sent but `sig`, in Core's canonical form.
/// HMAC from GLib's GHmac (the Hashing target); the comparison is constant-time.
public struct Signer: Sendable {
    private let key: [UInt8]

    public init(key: String) { self.key = Array(key.utf8) }

    /// The signature of a request whose parameters are `params` (any `sig` among them is
    /// left out).
    public func signature(path: String = "/thumb", _ params: QueryParameters) -> String {
        Self.base64URL(hmac(path + "?" + params.canonical()))
    }

    /// Whether `sig` is the signature of `params`, compared in constant time.
    public func verify(_ sig: String, path: String = "/thumb", _ params: QueryParameters) -> Bool {
        Self.same(signature(path: path, params), sig)
    }

    /// Equal strings, compared in constant time: the length is not secret (it is fixed),
    /// the contents are compared in full.
    public static func same(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(a.utf8), Array(b.utf8))
        guard x.count == y.count else { return false }
        var diff: UInt8 = 0
        for i in 0..<x.count { diff |= x[i] ^ y[i] }
        return diff == 0
    }

    func hmac(_ message: String) -> [UInt8] { HMACSHA256.mac(key: key, message: Array(message.utf8)) }

    /// RFC 4648 §5, without padding.
    public static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
