import Core
import Foundation
import Imgproxy
import Signing
import TestSupport
import Testing

/// The shared vectors (Tests/Fixtures/signing-vectors.json), computed independently.
@Suite struct SignerTests {
    typealias Vector = SigningVector

    static let vectors = SigningVector.all

    @Test func theVectorsAreThere() { #expect(Self.vectors.count == 3) }

    @Test(arguments: vectors)
    func canonicalFormAndSignature(_ v: Vector) throws {
        let params = try QueryParameters.decode(v.query)
        #expect(params.canonical() == v.canonical)
        let signer = Signer(key: v.key)
        #expect(signer.signature(params) == v.sig)
        #expect(signer.verify(v.sig, params))
        // Signed with sig present, in another order: the same.
        let reordered = try QueryParameters.decode(
            "sig=\(v.sig)&" + v.query.split(separator: "&").reversed().joined(separator: "&"))
        #expect(signer.verify(v.sig, reordered))
    }

    @Test(arguments: vectors)
    func anyChangeBreaksIt(_ v: Vector) throws {
        let params = try QueryParameters.decode(v.query)
        let signer = Signer(key: v.key)
        #expect(!Signer(key: v.key + "x").verify(v.sig, params))
        #expect(!signer.verify(v.sig, try QueryParameters.decode(v.query + "&upscale=1")))
        #expect(!signer.verify(String(v.sig.dropLast()), params))
        #expect(!signer.verify(String(v.sig.dropLast()) + (v.sig.hasSuffix("A") ? "B" : "A"), params))
        #expect(!signer.verify("", params))
    }
}

/// imgproxy's signature, held to the example of imgproxy's docs ("Signing a URL": key
/// `secret`, salt `hello`; Python's `hmac` gives the same value), and truncated as
/// `IMGPROXY_SIGNATURE_SIZE` truncates it.
@Suite struct ImgproxySignerTests {
    static let path = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"

    @Test func theDocsExample() throws {
        let signer = try #require(ImgproxySigner(keyHex: "736563726574", saltHex: "68656C6C6F"))
        #expect(signer.signature(path: Self.path) == "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8")
        #expect(signer.verify("oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8", path: Self.path))
        #expect(!signer.verify("oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH9", path: Self.path))
        #expect(!signer.verify("oKfUtW34Dvo", path: Self.path))
        let short = try #require(ImgproxySigner(keyHex: "736563726574", saltHex: "68656C6C6F", size: 8))
        #expect(short.signature(path: Self.path) == "oKfUtW34Dvo")
        #expect(ImgproxySigner(keyHex: "xyz", saltHex: "00") == nil)
    }
}
