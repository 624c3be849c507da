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
        return fixture("signing-vectors.json", as: Document.self)?.vectors ?? []
    }()
}
