import Foundation

/// A JSON file of Tests/Fixtures, decoded; nil when it is missing or does not decode (the
/// tests that use one also check that it is there).
public func fixture<T: Decodable>(_ name: String, as type: T.Type) -> T? {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/\(name)")
    guard let data = try? Data(contentsOf: url) else { return nil }
    return try? JSONDecoder().decode(type, from: data)
}
