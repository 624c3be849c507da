import Core
import Testing
import Thumbor

/// thumbor's URL grammar (SPEC: thumbor URLs; issue 40, the parser first): every part in
/// its order, each optional, read as thumbor 7.8's pattern in its `url.py` reads them, and
/// bad input a 400 naming the part (a bad signature part a 403).
@Suite struct ThumborPathTests {
    static func parse(_ path: String) throws(AspectError) -> ThumborPath { try ThumborPath.parse(Substring(path)) }

    @Test func everyPartInItsOrder() throws {
        let u = try Self.parse(
            "/unsafe/trim:bottom-right:20/10x20:300x400/adaptive-full-fit-in/-300x-orig/right/bottom/smart/filters:quality(80):format(webp):fill(blur)/photos/a%20b.jpg"
        )
        #expect(u.signature == .unsafe)
        #expect(u.trim == ThumborPath.Trim(corner: .bottomRight, tolerance: 20))
        #expect(u.crop == ThumborPath.Crop(left: 10, top: 20, right: 300, bottom: 400))
        #expect(u.fitIn == .adaptiveFull)
        #expect(u.width == .pixels(300) && u.height == .orig && u.flipHorizontally && u.flipVertically)
        #expect(u.halign == .right && u.valign == .bottom && u.smart)
        #expect(
            u.filters == [
                .init(name: "quality", arguments: ["80"]), .init(name: "format", arguments: ["webp"]),
                .init(name: "fill", arguments: ["blur"]),
            ])
        #expect(u.image == "photos/a%20b.jpg", "the image as sent, escapes kept")
        #expect(u.signedPath.hasPrefix("trim:bottom-right:20/") && u.signedPath.hasSuffix("a%20b.jpg"))
    }

    @Test func onlyTheImage() throws {
        let u = try Self.parse("/unsafe/cat.jpg")
        #expect(u.image == "cat.jpg" && u.width == .free && u.height == .free && u.trim == nil && u.filters.isEmpty)
        #expect(!u.smart && u.fitIn == nil && u.crop == nil && u.halign == nil)
    }

    /// The sizes: a side left out or 0 is free, `orig` the source's, `-` flips; `x` alone
    /// is both free.
    @Test(arguments: [
        ("300x200", ThumborPath.Side.pixels(300), ThumborPath.Side.pixels(200), false, false),
        ("300x", .pixels(300), .free, false, false), ("x200", .free, .pixels(200), false, false),
        ("0x200", .free, .pixels(200), false, false), ("x", .free, .free, false, false),
        ("-x-", .free, .free, true, true), ("origx100", .orig, .pixels(100), false, false),
        ("-0x-0", .free, .free, true, true), ("-200x100", .pixels(200), .pixels(100), true, false),
    ])
    func sizes(text: String, width: ThumborPath.Side, height: ThumborPath.Side, flipH: Bool, flipV: Bool) throws {
        let u = try Self.parse("/unsafe/\(text)/a.png")
        #expect(u.width == width && u.height == height && u.flipHorizontally == flipH && u.flipVertically == flipV)
        #expect(u.image == "a.png")
    }

    @Test(arguments: [
        ("trim", ThumborPath.Trim()), ("trim:top-left", ThumborPath.Trim()),
        ("trim:bottom-right", ThumborPath.Trim(corner: .bottomRight)),
        ("trim:15", ThumborPath.Trim(corner: .bottomRight)), ("trim:top-left:3", ThumborPath.Trim(tolerance: 3)),
    ])
    func trims(text: String, trim: ThumborPath.Trim) throws {
        #expect(try Self.parse("/unsafe/\(text)/a.png").trim == trim)
    }

    @Test func theFitInKinds() throws {
        for kind in ["fit-in", "full-fit-in", "adaptive-fit-in", "adaptive-full-fit-in"] {
            #expect(try Self.parse("/unsafe/\(kind)/100x100/a.png").fitIn?.rawValue == kind)
        }
    }

    /// A signature part of 28 URL-safe base64 characters (HMAC-SHA1, padded).
    @Test func aHashPart() throws {
        let hash = "8ln2oEjBbnTsWHbE-eXJFl5g2tY="
        let u = try Self.parse("/\(hash)/300x200/smart/a.jpg")
        #expect(u.signature == .hash(hash) && u.signedPath == "300x200/smart/a.jpg" && u.smart)
    }

    /// As thumbor's pattern: the filters part ends at the first `)/`, so an argument may
    /// hold a slash.
    @Test func aFilterArgumentMayHoldASlash() throws {
        let u = try Self.parse("/unsafe/filters:watermark(logos/brand.png,10,10,50):quality(70)/a.jpg")
        #expect(u.filters.first == .init(name: "watermark", arguments: ["logos/brand.png", "10", "10", "50"]))
        #expect(u.filters.count == 2 && u.image == "a.jpg")
        #expect(
            try Self.parse("/unsafe/filters:strip_icc()/a.jpg").filters == [.init(name: "strip_icc", arguments: [])])
    }

    /// Parts that look like none of the grammar's are the image's folders.
    @Test func anImagePathWithFolders() throws {
        let u = try Self.parse("/unsafe/300x200/2024/photos/cat.jpg")
        #expect(u.image == "2024/photos/cat.jpg" && u.width == .pixels(300))
    }

    @Test(arguments: [
        ("/300x200/a.jpg", AspectError.Code.badSignature), ("/unsafe", .badSignature),
        ("/short-hash/a.jpg", .badSignature), ("unsafe/a.jpg", .badParam), ("/unsafe/300x200/", .badParam),
        ("/unsafe/trim:left/a.jpg", .badParam), ("/unsafe/trim:top-left:999/a.jpg", .badParam),
        ("/unsafe/filters:quality(80)a.jpg/b.jpg", .badParam), ("/unsafe/filters:quality(80):/a.jpg", .badParam),
        ("/unsafe/filters:Quality(80)/a.jpg", .badParam), ("/unsafe/meta/a.jpg", .badParam),
        ("/unsafe/filters:quality(80)", .badParam),
    ])
    func badInputIsRefusedNamingThePart(path: String, code: AspectError.Code) {
        #expect(throws: AspectError.self) { try Self.parse(path) }
        do {
            _ = try Self.parse(path)
        } catch {
            #expect(error.code == code, "\(path): \(error)")
        }
    }

    /// A size too long for any image is not a size: read as the image's folder (thumbor's
    /// digits are unbounded; the planner would refuse it anyway).
    @Test func aSideOfSevenDigitsIsNotASize() throws {
        let u = try Self.parse("/unsafe/1234567x10/a.jpg")
        #expect(u.width == .free && u.image == "1234567x10/a.jpg")
    }

    // Ported from libthumbor's tests/test_url.py (thumbor's URL pattern lives in
    // libthumbor's `Url`): the complete URL of test_parsing_complete_url, and the option
    // strings test_can_generate_url and test_can_generate_url_with_fitin expect, each with
    // an image after it. Its `debug/` and `meta/` are refused here (a 400 naming them):
    // the same URL without them reads as thumbor reads it.

    @Test func libthumborsCompleteURL() throws {
        let rest =
            "trim/300x200:400x500/adaptive-full-fit-in/-300x-400/left/top/smart/filters:brightness(100)/some/image.jpg"
        let u = try Self.parse("/unsafe/" + rest)
        #expect(u.trim == ThumborPath.Trim())
        #expect(u.crop == ThumborPath.Crop(left: 300, top: 200, right: 400, bottom: 500))
        #expect(u.fitIn == .adaptiveFull && u.width == .pixels(300) && u.height == .pixels(400))
        #expect(u.flipHorizontally && u.flipVertically && u.halign == .left && u.valign == .top && u.smart)
        #expect(u.filters == [.init(name: "brightness", arguments: ["100"])] && u.image == "some/image.jpg")
        for reserved in ["debug", "meta"] {
            #expect(throws: AspectError.self) { try Self.parse("/unsafe/\(reserved)/" + rest) }
        }
    }

    @Test func libthumborsGeneratedOptions() throws {
        let u = try Self.parse(
            "/unsafe/trim/100x100:400x400/adaptive-full-fit-in/-300x-200/left/top/smart/filters:brightness(100)/a.jpg")
        #expect(u.crop == ThumborPath.Crop(left: 100, top: 100, right: 400, bottom: 400))
        #expect(u.width == .pixels(300) && u.height == .pixels(200) && u.flipHorizontally && u.flipVertically)
        #expect(try Self.parse("/unsafe/fit-in/a.jpg").fitIn == .fitIn)
        // libthumbor writes a flip with no sizes as -0x-0.
        let flips = try Self.parse("/unsafe/-0x-0/a.jpg")
        #expect(flips.flipHorizontally && flips.flipVertically && flips.width == .free && flips.height == .free)
    }
}
