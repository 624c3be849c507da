import Hashing
import Signing

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
