import Core
import Foundation
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
