import Foundation
import Testing

@testable import Configuration
@testable import Core

/// `format=best`'s candidates, tags and plan (SPEC: Efficiency), before any pixel.
@Suite struct BestFormatTests {
    static let source = SourceDescription(
        size: Size(width: 4000, height: 3000), hasAlpha: false, format: "jpeg", bytes: 1)

    static func order(
        _ query: String, accept: String?, source: SourceDescription = source, limits: RequestLimits = RequestLimits()
    )
        throws -> RenderOrder
    {
        try RenderOrder.plan(
            ThumbRequest.parse(query: query, limits: limits), source: source, limits: limits, accept: accept)
    }

    @Test func theCandidatesAreWhatAcceptListsJPEGAndPNGAlways() throws {
        let all = try #require(
            try Self.order("src=a&w=300&format=best", accept: "image/avif,image/webp,image/jxl,*/*").best)
        #expect(all.lossy == [.avif, .jxl, .webp, .jpeg] && all.lossless == [.png, .webp] && !all.losslessAlways)
        let webp = try #require(try Self.order("src=a&w=300&format=best", accept: "image/webp,*/*").best)
        #expect(webp.lossy == [.webp, .jpeg] && webp.lossless == [.png, .webp])
        for accept in ["*/*", "image/avif;q=0,image/webp;q=0", nil] {
            let plain = try #require(try Self.order("src=a&w=300&format=best", accept: accept).best)
            #expect(plain.lossy == [.jpeg] && plain.lossless == [.png], "\(accept ?? "none")")
        }
        // output.bestFormats narrows what is weighed, whatever Accept says.
        var limits = RequestLimits()
        limits.bestFormats = [.webp]
        let narrowed = try #require(
            try Self.order("src=a&w=300&format=best", accept: "image/avif,image/webp", limits: limits).best)
        #expect(narrowed.lossy == [.webp] && narrowed.lossless == [.png, .webp])
        // With nothing lossy left, the lossless ones are weighed for any picture.
        let none = try #require(try Self.order("src=a&w=300&format=best", accept: "*/*", limits: limits).best)
        #expect(none.lossy == [.jpeg] && none.losslessAlways == false)
    }

    @Test func aResultWithAlphaWeighsNoJPEGAndAlwaysTheLosslessOnes() throws {
        var alpha = Self.source
        alpha.hasAlpha = true
        let order = try Self.order("src=a&w=300&format=best", accept: "image/webp", source: alpha)
        let best = try #require(order.best)
        #expect(best.lossy == [.webp] && best.losslessAlways && order.format == .webp)
        let circle = try #require(try Self.order("src=a&w=300&shape=circle&format=best", accept: "*/*").best)
        #expect(circle.lossy.isEmpty && circle.lossless == [.png] && circle.losslessAlways)
        // Padding on an opaque colour keeps an opaque source opaque: JPEG stays.
        let padded = try #require(
            try Self.order("src=a&w=300&h=300&mode=pad&bg=ffffff&format=best", accept: "*/*").best)
        #expect(padded.lossy == [.jpeg] && !padded.losslessAlways)
    }

    @Test func bestIsAutoWithAQualityMaxBytesALargeOutputOrAnAnimation() throws {
        let accept = "image/avif,image/webp"
        #expect(try Self.order("src=a&w=300&format=best", accept: accept).autoQuality != nil)
        for query in [
            "src=a&w=300&format=best&q=70", "src=a&w=300&format=best&maxbytes=5000", "src=a&w=1633&format=best",
        ] {
            let order = try Self.order(query, accept: accept)
            #expect(order.best == nil && order.format == .webp, "\(query)")
        }
        var animated = Self.source
        animated.frames = 5
        let moving = try Self.order("src=a&w=300&format=best", accept: accept, source: animated)
        #expect(moving.best == nil && moving.animated && moving.format == .webp)
        // 1632 × 1224 is under 2,000,000 pixels; 1633 × 1225 is over.
        #expect(try Self.order("src=a&w=1632&format=best", accept: accept).best != nil)
    }

    @Test func theTagNamesTheAcceptedSetAndNothingElse() {
        let formats = Defaults.Output.bestFormats
        #expect(AcceptHeader.bestTag(nil, formats: formats) == "best")
        #expect(AcceptHeader.bestTag("*/*", formats: formats) == "best")
        #expect(AcceptHeader.bestTag("image/webp,image/avif,image/jxl,*/*", formats: formats) == "best+avif+jxl+webp")
        #expect(AcceptHeader.bestTag("image/webp;q=0.9, image/png", formats: formats) == "best+webp")
        #expect(AcceptHeader.bestTag("image/avif,image/webp", formats: [.webp, .jpeg]) == "best+webp")
    }

    @Test func theChoiceHasANameForEachWayItCanGo() {
        #expect(BestChoice(format: .webp, lossless: true).name == "webp-lossless")
        #expect(BestChoice(format: .png, lossless: true).name == "png")
        for name in BestChoice.names { #expect(BestChoice(name: name)?.name == name) }
        #expect(BestChoice(name: "gif") == nil && BestChoice(name: "tiff") == nil)
    }

    @Test func formatBestParsesAndTheDefaultCanBeIt() throws {
        #expect(try ThumbRequest.parse(query: "src=a&format=best", limits: RequestLimits()).format == .best)
        var limits = RequestLimits()
        limits.defaultFormat = .best
        let unnamed = try ThumbRequest.parse(query: "src=a&w=10", limits: limits)
        #expect(unnamed.format == .best && unnamed.canonical.contains("format=best"))
        #expect(try ThumbRequest.parse(query: "src=a&w=10&format=jpeg", limits: limits).format == .jpeg)
        func load(_ env: [String: String]) throws(ConfigError) -> Config {
            try Config.load(
                ConfigSources(
                    filePath: nil, fileContents: nil, environment: env, flags: [:], workingDirectory: "/srv/aspect"))
        }
        let c = try load(["ASPECT_OUTPUT_FORMAT": "best", "ASPECT_OUTPUT_BESTFORMATS": "webp, jpeg"])
        #expect(c.requestLimits.defaultFormat == .best && c.requestLimits.bestFormats == [.webp, .jpeg])
        #expect(try load([:]).requestLimits.bestFormats == [.avif, .webp, .jxl, .jpeg])
        for (key, value) in [
            ("ASPECT_OUTPUT_BESTFORMATS", "webp,png"), ("ASPECT_OUTPUT_FORMAT", "webp"),
            ("ASPECT_OUTPUT_BESTMAXPIXELS", "0"),
        ] {
            #expect(throws: ConfigError.self) { try load([key: value]) }
        }
    }
}

/// A storyboard's times and places (SPEC: Video), before any frame.
@Suite struct StoryboardTests {
    static func request(_ query: String) throws -> ThumbRequest {
        try ThumbRequest.parse(query: "src=v.mp4&w=160&h=90&" + query, limits: RequestLimits())
    }

    @Test func tilesFallEveryStepFromTheStartAcrossSheets() throws {
        let r = try Self.request("tiles=4x2&every=10")
        let board = try Storyboard(r, grid: Grid(columns: 4, rows: 2), duration: 95)
        #expect(board.tiles == 10 && board.sheets == 2)
        #expect(try board.moments(sheet: 1) == [80, 90])
        #expect(throws: AspectError.self) { try board.moments(sheet: 2) }
        let cues = board.cues(tile: Size(width: 160, height: 90))
        #expect(cues[5] == Storyboard.Cue(start: 50, end: 60, sheet: 0, x: 160, y: 90, width: 160, height: 90))
        #expect(cues[9] == Storyboard.Cue(start: 90, end: 95, sheet: 1, x: 160, y: 0, width: 160, height: 90))
        #expect(board.sheetSize(tile: Size(width: 160, height: 90)) == Size(width: 640, height: 180))
        // Without every: the rest of the video after t over one sheet.
        let spread = try Storyboard(try Self.request("tiles=5x2&t=20"), grid: Grid(columns: 5, rows: 2), duration: 120)
        #expect(spread.every == 10 && spread.sheets == 1 && spread.tiles == 10)
        // Rounding never adds a tile to the default spread (1.001 / 25 × 25 rounds up past 25).
        let odd = try Storyboard(try Self.request("tiles=5x5"), grid: Grid(columns: 5, rows: 5), duration: 1.001)
        #expect(odd.tiles == 25 && odd.sheets == 1)
        // Nor an explicit every that divides the clip (2.1 s every 0.7 s: three tiles).
        let even = try Storyboard(
            try Self.request("tiles=3x1&every=0.7"), grid: Grid(columns: 3, rows: 1), duration: 2.1)
        #expect(even.tiles == 3 && even.sheets == 1)
        #expect(throws: AspectError.self) { try Self.request("tiles=3x1&trim=10") }
    }

    @Test func tooManyTilesOrAStartPastTheEndIsRefused() throws {
        #expect(throws: AspectError.self) {
            try Storyboard(try Self.request("tiles=2x2&every=0.01"), grid: Grid(columns: 2, rows: 2), duration: 3600)
        }
        #expect(throws: AspectError.self) {
            try Storyboard(try Self.request("tiles=2x2&t=50"), grid: Grid(columns: 2, rows: 2), duration: 40)
        }
        #expect(try Self.request("tiles=10x10").tiles == Grid(columns: 10, rows: 10))
        #expect(throws: AspectError.self) { try Self.request("tiles=10x11") }
        #expect(try Self.request("tiles=3x2&every=1.5&sheet=2").canonical.contains("every=1.5"))
    }
}
