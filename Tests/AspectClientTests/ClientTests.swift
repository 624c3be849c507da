import Foundation
import TestSupport
import Testing

@testable import AspectClient

/// The client library: its URLs, its canonical form and signatures against the vectors
/// the server's tests use (Tests/Fixtures/signing-vectors.json, computed independently),
/// and its SHA-256 against published vectors.
@Suite struct ClientTests {
    typealias Vector = SigningVector

    static let vectors = SigningVector.all

    /// A query as sent, decoded into pairs (the vectors' queries use %-escapes only).
    static func pairs(_ query: String) -> [(String, String)] {
        query.split(separator: "&").map { piece in
            let parts = piece.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }
    }

    @Test func theVectorsAreThere() { #expect(Self.vectors.count == 3) }

    /// docs/clients.md's example, built here, gives the URL its comment shows.
    @Test func theDocsExampleURLIsWhatTheBuilderMakes() throws {
        let swift = Docs.blocks(try Docs.text("docs/clients.md")).filter { $0.language == "swift" }
        let example = try #require(
            swift.first { $0.lines.contains { $0.contains("Thumbnail(src: \"photos/cat.jpg\")") } })
        let shown = try #require(example.lines.first { $0.hasPrefix("// https://") }).dropFirst(3)
        let base = try #require(URL(string: "https://img.example.com"))
        let built = Thumbnail(src: "photos/cat.jpg").ratio(4, 3).width(300).mode(.fill).url(base: base)
        #expect(built?.absoluteString == String(shown))
    }

    @Test(arguments: vectors)
    func canonicalFormAndSignatureMatchTheServers(_ v: Vector) {
        let canonical = Signature.canonical(Self.pairs(v.query))
        #expect(canonical == v.canonical)
        #expect(Signature.sign("/thumb?" + canonical, key: v.key) == v.sig)
        #expect(Signature.sign("/thumb?" + canonical, key: v.key + "x") != v.sig)
    }

    @Test func theBuilderMakesTheFirstVectorsURL() throws {
        let v = try #require(Self.vectors.first)
        let t = Thumbnail(src: "a.jpg").ratio(4, 3).width(300).mode(.fill)
        #expect(t.path() == "/thumb?" + v.canonical)
        #expect(t.path(signingKey: v.key) == "/thumb?\(v.canonical)&sig=\(v.sig)")
        let url = t.url(base: try #require(URL(string: "http://127.0.0.1:8080/")), signingKey: v.key)
        #expect(url?.absoluteString == "http://127.0.0.1:8080/thumb?\(v.canonical)&sig=\(v.sig)")
    }

    @Test func everyStepSetsItsParameter() {
        let t = Thumbnail(src: "dir/a b+c.png").width(64).height(48).dpr(2).focus(x: 0.25, y: 1).shape(.rounded)
            .radius(12).background("ff000080").format(.webp).quality(70).upscale(true).mode(.pad)
        #expect(
            t.parameters == [
                "src": "dir/a b+c.png", "w": "64", "h": "48", "dpr": "2", "gravity": "focus", "fx": "0.25", "fy": "1",
                "shape": "rounded", "radius": "12", "bg": "ff000080", "format": "webp", "q": "70", "upscale": "1",
                "mode": "pad",
            ])
        // Space and plus are escaped: the server reads a bare + as a space.
        #expect(t.path().contains("src=dir%2Fa%20b%2Bc.png"))
        #expect(Thumbnail(src: "a").ratio(1.5).path() == "/thumb?ratio=1.5&src=a")
        #expect(Thumbnail(src: "a").ratio(16, 9).path() == "/thumb?ratio=16%3A9&src=a")
        #expect(Thumbnail(src: "doc.pdf").page(3).width(200).path() == "/thumb?page=3&src=doc.pdf&w=200")
        #expect(Thumbnail(src: "a.mp4").time(2.5).preview(frames: 6).path() == "/thumb?frames=6&src=a.mp4&t=2.5")
        #expect(
            Thumbnail(src: "a").pixelate(8).extend().padding(top: 1, right: 2, bottom: 3, left: 4).maxBytes(20000)
                .watermark("logo").autoQuality().path()
                == "/thumb?extend=1&maxbytes=20000&padding=1%2C2%2C3%2C4&pixelate=8&q=auto&src=a&wm=logo")
    }

    /// gravity=face (SPEC: Faces): the builder says it, `/info` asks for the faces, and
    /// `ImageInfo` reads them as the server writes them.
    @Test func facesAreAskedForAndRead() throws {
        let t = Thumbnail(src: "team.jpg").width(64).ratio(1).mode(.fill).gravity(.face)
        #expect(t.path() == "/thumb?gravity=face&mode=fill&ratio=1&src=team.jpg&w=64")
        let base = try #require(URL(string: "http://img.example"))
        #expect(
            Thumbnail(src: "team.jpg").infoURL(base: base, faces: true)?.absoluteString
                == "http://img.example/info?faces=1&src=team.jpg")
        let json = #"""
            {"source": {"width": 1280, "height": 720, "format": "jpeg", "hasAlpha": false, "orientation": 1, "frames": 1, "pages": 1, "bytes": 50427}, "ratio": 1.7777777777777777, "thumbhash": "TxgGDISWt2p/ZYSkhoWKj6L6SA==", "blurhash": "L8AJcvMxnlrs}[RjNGWA9uxuNGxZ", "averageColor": "#453a33", "dominantColor": "#080a0a", "faces": [{"x": 0.7203, "y": 0.1694, "w": 0.1141, "h": 0.2028}]}
            """#
        let info = try JSONDecoder().decode(ImageInfo.self, from: Data(json.utf8))
        #expect(info.faces == [ImageInfo.Face(x: 0.7203, y: 0.1694, w: 0.1141, h: 0.2028)])
    }

    @Test func saveDataIsAHeaderOnTheRequest() throws {
        let server = AspectServer(base: try #require(URL(string: "http://127.0.0.1:8080")))
        let saving = try #require(server.request(Thumbnail(src: "a.jpg").width(300), saveData: true))
        #expect(saving.value(forHTTPHeaderField: "Save-Data") == "on")
        #expect(saving.url?.absoluteString == "http://127.0.0.1:8080/thumb?src=a.jpg&w=300")
        #expect(try #require(server.request(Thumbnail(src: "a.jpg"))).value(forHTTPHeaderField: "Save-Data") == nil)
    }

    static func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }

    @Test func sha256AndHMACMatchPublishedVectors() {
        // FIPS 180-4 examples and RFC 4231 test case 2.
        #expect(
            Self.hex(SHA256.hash(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            Self.hex(SHA256.hash([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            Self.hex(SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            Self.hex(HMACSHA256.mac(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // A key longer than a block is hashed first (RFC 4231 test case 6).
        #expect(
            Self.hex(
                HMACSHA256.mac(
                    key: [UInt8](repeating: 0xaa, count: 131),
                    message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }
}
