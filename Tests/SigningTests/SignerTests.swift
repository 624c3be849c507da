import Core
import Foundation
import Signing
import Testing

/// The shared vectors (Tests/Fixtures/signing-vectors.json), computed independently.
@Suite struct SignerTests {
    struct Vector: Decodable, Sendable {
        let key: String
        let query: String
        let canonical: String
        let sig: String
    }

    struct Document: Decodable { let vectors: [Vector] }

    static let vectors: [Vector] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/signing-vectors.json")
        guard let data = try? Data(contentsOf: url), let doc = try? JSONDecoder().decode(Document.self, from: data)
        else {
            return []
        }
        return doc.vectors
    }()

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
