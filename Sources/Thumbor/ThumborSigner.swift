import Foundation
import Hashing
import Signing

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
