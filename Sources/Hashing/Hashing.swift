internal import CGLib

/// SHA-256, by GLib's GChecksum: the cache's keys.
public enum SHA256 {
    public static func digest(_ bytes: [UInt8]) -> [UInt8] { glibDigest(bytes, size: 32, cglib_sha256) }

    /// Lower-case hex digest of `text`'s UTF-8 bytes.
    public static func hex(_ text: String) -> String { Hex.string(digest(Array(text.utf8))) }
}

/// MD5, by GLib's GChecksum: S3's Content-MD5 on DeleteObjects, nothing that needs security.
public enum MD5 {
    public static func digest(_ bytes: [UInt8]) -> [UInt8] { glibDigest(bytes, size: 16, cglib_md5) }
}

/// One of CGLib's digests of `bytes`, `size` bytes long.
private func glibDigest(
    _ bytes: [UInt8], size: Int, _ digest: (UnsafeRawPointer?, Int, UnsafeMutablePointer<UInt8>?) -> Void
) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: size)
    bytes.withUnsafeBytes { raw in
        out.withUnsafeMutableBufferPointer { digest(raw.baseAddress, raw.count, $0.baseAddress) }
    }
    return out
}

/// HMAC-SHA256, by GLib's GHmac: signed URLs, and AWS Signature V4.
public enum HMACSHA256 {
    public static func mac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        glibMAC(key, message, size: 32, cglib_hmac_sha256)
    }
}

/// HMAC-SHA1, by GLib's GHmac: thumbor's URL signatures, which are its scheme.
public enum HMACSHA1 {
    public static func mac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        glibMAC(key, message, size: 20, cglib_hmac_sha1)
    }
}

/// One of CGLib's HMACs, `size` bytes long; empty if GLib refused (it refuses only an
/// unknown digest type, and SHA-1 and SHA-256 are always known).
private func glibMAC(
    _ key: [UInt8], _ message: [UInt8], size: Int,
    _ mac: (UnsafeRawPointer?, Int, UnsafeRawPointer?, Int, UnsafeMutablePointer<UInt8>?) -> Int32
) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: size)
    let ok = key.withUnsafeBytes { k in
        message.withUnsafeBytes { m in
            out.withUnsafeMutableBufferPointer { mac(k.baseAddress, k.count, m.baseAddress, m.count, $0.baseAddress) }
        }
    }
    return ok == 0 ? out : []
}

/// Lower-case hexadecimal.
public enum Hex {
    public static func string(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// A source's short name where a whole path does not fit or must not show: the first 16
/// hex digits of SHA-256 of `src`. One rule for the CDN tag (`src-…`) and the shared
/// tier's folder of a source's variants.
public enum SourceHash {
    public static func of(_ src: String) -> String { String(SHA256.hex(src).prefix(16)) }
}
