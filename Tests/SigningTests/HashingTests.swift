import Hashing
import Testing

/// GLib's SHA-256 and HMAC-SHA256 through the Hashing target, against published vectors
/// (FIPS 180-2's "abc", RFC 4231's test cases 1 and 2).
@Suite struct HashingTests {
    @Test func sha256() {
        #expect(SHA256.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func hmacSHA256() {
        let jefe = HMACSHA256.mac(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(Hex.string(jefe) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        let case1 = HMACSHA256.mac(key: [UInt8](repeating: 0x0B, count: 20), message: Array("Hi There".utf8))
        #expect(Hex.string(case1) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    }
}
