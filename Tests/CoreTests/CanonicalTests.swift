import Testing

@testable import Core

@Suite struct CanonicalTests {
    @Test func sortsAndEncodesUnreservedOnly() throws {
        let q = try QueryParameters.decode("w=300&src=photos%2Fcat%20one.jpg&ratio=4:3&sig=xyz&mode=fill")
        #expect(q.canonical() == "mode=fill&ratio=4%3A3&src=photos%2Fcat%20one.jpg&w=300")
        #expect(q.canonical(excluding: []) == "mode=fill&ratio=4%3A3&sig=xyz&src=photos%2Fcat%20one.jpg&w=300")
    }

    @Test(arguments: [
        ("a-b.c_d~e", "a-b.c_d~e"), ("a b", "a%20b"), ("a+b", "a%2Bb"), ("ü", "%C3%BC"),
        ("/?#[]@!$&'()*+,;=%", "%2F%3F%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D%25"),
        ("", ""), ("ABCxyz019", "ABCxyz019"), ("😀", "%F0%9F%98%80"),
    ])
    func rfc3986Encoding(raw: String, encoded: String) {
        #expect(PercentEncoding.encode(raw) == encoded)
    }

    @Test func spellingsOfOneRequestShareTheCanonicalRequest() throws {
        let spellings = [
            "src=a%20b.jpg&w=300&ratio=4:3&mode=fill",
            "mode=fill&ratio=4%3A3&w=300&src=a+b.jpg",
            "src=a%20b.jpg&w=300&h=225&mode=fill&gravity=center&upscale=0&dpr=1&format=auto",
            "src=a%20b.jpg&w=0300&ratio=8:6&mode=fill&upscale=false&dpr=1.0",
            "src=a%20b.jpg&w=300&ratio=1.3333333333333333&mode=fill&sig=abc",
            "src=a%20b.jpg&w=300&ratio=4:3&mode=fill&page=1",
        ]
        let canonical = try spellings.map { try ThumbRequest.parse(query: $0, limits: defaultLimits).canonical }
        #expect(Set(canonical).count == 1, "\(canonical)")
        #expect(canonical[0] == "dpr=1&format=auto&gravity=center&h=225&mode=fill&src=a%20b.jpg&upscale=0&w=300")
    }

    @Test func differentRequestsDiffer() throws {
        let queries = [
            "src=a.jpg&w=300", "src=a.jpg&w=301", "src=b.jpg&w=300", "src=a.jpg&w=300&mode=fill",
            "src=a.jpg&w=300&mode=fill&gravity=north", "src=a.jpg&w=300&dpr=2", "src=a.jpg&w=300&upscale=1",
            "src=a.jpg&w=300&shape=circle", "src=a.jpg&w=300&shape=rounded", "src=a.jpg&w=300&shape=rounded&radius=9",
            "src=a.jpg&w=300&bg=ffffff", "src=a.jpg&w=300&format=png", "src=a.jpg&w=300&q=50", "src=a.jpg&ratio=1",
            "src=a.jpg&w=300&mode=fill&gravity=focus&fx=0.1", "src=a.jpg&w=300&mode=fill&gravity=focus&fy=0.1",
            "src=a.jpg&w=300&page=2",
        ]
        let canonical = try queries.map { try ThumbRequest.parse(query: $0, limits: defaultLimits).canonical }
        #expect(Set(canonical).count == queries.count)
    }

    @Test func gravityIsLeftOutWhereItHasNoEffect() throws {
        let a = try ThumbRequest.parse(query: "src=a.jpg&w=300&gravity=north", limits: defaultLimits)
        let b = try ThumbRequest.parse(query: "src=a.jpg&w=300", limits: defaultLimits)
        #expect(a.canonical == b.canonical)
    }

    @Test func formatResolution() {
        #expect(FormatChoice.auto.resolve(accept: "image/avif,image/webp,*/*", resultHasAlpha: false) == .webp)
        #expect(FormatChoice.auto.resolve(accept: "image/webp;q=0, image/png", resultHasAlpha: false) == .jpeg)
        #expect(FormatChoice.auto.resolve(accept: "*/*", resultHasAlpha: true) == .png)
        #expect(FormatChoice.auto.resolve(accept: nil, resultHasAlpha: false) == .jpeg)
        #expect(FormatChoice.auto.resolve(accept: "IMAGE/WEBP", resultHasAlpha: false) == .webp)
        #expect(FormatChoice.png.resolve(accept: "image/webp", resultHasAlpha: false) == .png)
        #expect(FormatChoice.jpeg.resolve(accept: nil, resultHasAlpha: true) == .jpeg)
        // http.autoAvif: AVIF first for a client that lists it, only when on.
        let browser = "image/avif,image/webp,*/*"
        #expect(FormatChoice.auto.resolve(accept: browser, resultHasAlpha: false, autoAvif: true) == .avif)
        #expect(FormatChoice.auto.resolve(accept: "image/webp", resultHasAlpha: false, autoAvif: true) == .webp)
        #expect(
            FormatChoice.auto.resolve(accept: "image/avif;q=0,image/webp", resultHasAlpha: true, autoAvif: true)
                == .webp)
        #expect(AcceptHeader.autoTag(browser, autoAvif: true) == "auto+avif")
        #expect(AcceptHeader.autoTag(browser, autoAvif: false) == "auto+webp")
        #expect(AcceptHeader.autoTag(nil, autoAvif: true) == "auto")
        // http.autoJxl: JPEG XL before AVIF for a client that lists it, only when on.
        let safari = "image/jxl,image/avif,image/webp,*/*"
        #expect(FormatChoice.auto.resolve(accept: safari, resultHasAlpha: false, autoAvif: true, autoJxl: true) == .jxl)
        #expect(FormatChoice.auto.resolve(accept: safari, resultHasAlpha: false, autoAvif: true) == .avif)
        #expect(FormatChoice.auto.resolve(accept: browser, resultHasAlpha: false, autoJxl: true) == .webp)
        #expect(FormatChoice.jxl.resolve(accept: nil, resultHasAlpha: true) == .jxl)
        #expect(AcceptHeader.autoTag(safari, autoAvif: true, autoJxl: true) == "auto+jxl")
        #expect(AcceptHeader.autoTag(safari, autoAvif: true) == "auto+avif")
        #expect(ImageFormat.jxl.mimeType == "image/jxl" && ImageFormat.jxl.defaultQuality == 75)
        #expect(ImageFormat(fileExtension: "JXL") == .jxl)
    }

    @Test func colours() {
        #expect(Color(hex: "FF8800")?.description == "ff8800")
        #expect(Color(hex: "00000080") == Color(red: 0, green: 0, blue: 0, alpha: 128))
        #expect(Color(hex: "000000ff")?.description == "000000")
        #expect(Color(hex: "12345") == nil)
        #expect(Color(hex: "zzzzzz") == nil)
    }
}
