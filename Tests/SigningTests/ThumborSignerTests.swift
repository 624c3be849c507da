import Foundation
import Signing
import Testing
import Thumbor

/// thumbor's signature against Python's own `hmac` and `base64` (thumbor's
/// `CryptoURL`/`Signer` is `base64.urlsafe_b64encode(hmac.new(key, path, sha1).digest())`),
/// computed here by running python3 on each case.
@Suite struct ThumborSignerTests {
    static let cases: [(key: String, path: String)] = [
        ("MY_SECURE_KEY", "300x200/smart/thumbor.readthedocs.io/en/latest/_images/logo-thumbor.png"),
        ("k", "fit-in/-300x-200/filters:quality(80):format(webp)/photos/a%20b.jpg"),
        ("ünïcødé key", "trim:bottom-right:10/10x20:300x400/photos/%C3%A9t%C3%A9.jpg"),
        ("", "x/a.jpg"),
    ]

    /// Python's answer for one case: the same formula, written as thumbor writes it.
    static func python(_ key: String, _ path: String) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [
            "python3", "-c",
            "import base64, hashlib, hmac, sys; "
                + "print(base64.urlsafe_b64encode(hmac.new(sys.argv[1].encode(), sys.argv[2].encode(), hashlib.sha1).digest()).decode())",
            key, path,
        ]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        p.waitUntilExit()
        return String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(arguments: cases)
    func theSignatureIsPythons(key: String, path: String) throws {
        let expected = try Self.python(key, path)
        #expect(expected.count == 28 && expected.hasSuffix("="), "python3 said \(expected)")
        let signer = ThumborSigner(key: key)
        #expect(signer.signature(path: Substring(path)) == expected)
        #expect(signer.verify(expected, path: Substring(path)))
        // Unpadded, another path, another key: refused.
        #expect(!signer.verify(String(expected.dropLast()), path: Substring(path)))
        #expect(!signer.verify(expected, path: Substring(path + "x")))
        #expect(!ThumborSigner(key: key + "x").verify(expected, path: Substring(path)))
    }
}
