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
    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// imgproxy's signature (`security/signature.go`): `base64url_nopad(HMAC-SHA256(key, salt
/// + path))`, truncated to `size` bytes, the key and salt given in hex.
public struct ImgproxySigner: Sendable {
    private let key: [UInt8]
    private let salt: [UInt8]
    private let size: Int

    /// nil when the key or the salt is not hex.
    public init?(keyHex: String, saltHex: String, size: Int = 32) {
        guard let key = Self.bytes(hex: keyHex), let salt = Self.bytes(hex: saltHex) else { return nil }
        self.key = key
        self.salt = salt
        self.size = max(1, min(32, size))
    }

    public func signature(path: String) -> String {
        let mac = HMACSHA256.mac(key: key, message: salt + Array((path.hasPrefix("/") ? path : "/" + path).utf8))
        return Signer.base64URL(Array(mac.prefix(size)))
    }

    /// Whether `signature` signs `path`, compared in constant time.
    public func verify(_ signature: String, path: String) -> Bool {
        Signer.same(self.signature(path: path), signature)
    }

    public static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            out.append(byte)
        }
        return out
    }
}

/// thumbor's signature (SPEC: thumbor URLs): URL-safe base64, with its `=` padding, of
/// HMAC-SHA1(key, the path after the signature's segment, exactly as sent).
public struct ThumborSigner: Sendable {
    private let key: [UInt8]

    public init(key: String) { self.key = Array(key.utf8) }

    public func signature(path: Substring) -> String {
        Data(HMACSHA1.mac(key: key, message: Array(path.utf8))).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    /// Whether `signature` signs `path`, compared in constant time; an unpadded one does not.
    public func verify(_ signature: String, path: Substring) -> Bool {
        Signer.same(self.signature(path: path), signature)
    }
}
