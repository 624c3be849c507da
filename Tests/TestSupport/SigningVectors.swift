import Foundation

/// Tests/Fixtures/signing-vectors.json: requests, their canonical form and signature,
/// computed independently of Aspect's code; the server's and the client's tests both
/// hold their code to them.
public struct SigningVector: Decodable, Sendable {
    public let key: String
    public let query: String
    public let canonical: String
    public let sig: String

    public static let all: [SigningVector] = {
        struct Document: Decodable { let vectors: [SigningVector] }
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/signing-vectors.json")
        guard let data = try? Data(contentsOf: url), let doc = try? JSONDecoder().decode(Document.self, from: data)
        else { return [] }
        return doc.vectors
    }()
}
