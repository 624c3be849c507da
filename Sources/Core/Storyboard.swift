import Foundation

/// A storyboard's grid (SPEC: Video, "Storyboards"): `tiles=COLSxROWS`.
public struct Grid: Equatable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var columns: Int
    public var rows: Int

    public init(columns: Int, rows: Int) {
        self.columns = columns
        self.rows = rows
    }

    public var count: Int { columns * rows }
    public var description: String { "\(columns)x\(rows)" }

    /// The largest side of a grid (SPEC).
    public static let maxSide = 20

    /// `COLSxROWS`, each 1 … 20, at most `limits.maxTiles` tiles.
    public static func parse(_ text: String, _ limits: RequestLimits) throws(AspectError) -> Grid {
        let parts = text.split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let c = NumberSyntax.integer(parts[0]), let r = NumberSyntax.integer(parts[1]),
            (1...maxSide).contains(c), (1...maxSide).contains(r)
        else {
            throw .badParam(
                "tiles must be COLSxROWS, each from 1 to \(maxSide) (10x10: a hundred frames), got \(quoted(text))")
        }
        guard c * r <= limits.maxTiles else {
            throw .badParam("tiles=\(text) is \(c * r) tiles, over limits.maxTiles \(limits.maxTiles)")
        }
        return Grid(columns: c, rows: r)
    }
}

extension FormatChoice {
    /// The formats that make a preview a video.
    public var isVideoPreview: Bool { self == .mp4 || self == .webm }
}

/// Where a storyboard's tiles fall in time and on its sheets: the k-th frame (k from 0,
/// across every sheet) at `start + k × every`, while that is inside the video.
public struct Storyboard: Equatable, Sendable {
    public var grid: Grid
    public var start: Double
    public var every: Double
    public var duration: Double

    /// `request`'s storyboard of a video `duration` seconds long: from `t` (0 when not
    /// given; past the end is a 400), `every` seconds apart (default: the rest of the video
    /// spread over one sheet's tiles).
    public init(_ request: ThumbRequest, grid: Grid, duration: Double) throws(AspectError) {
        let start = request.time ?? 0
        guard duration > 0, start < duration else {
            throw AspectError(
                .badParam,
                "t=\(NumberSyntax.text(start)) is past the end: the video is \(NumberSyntax.text((duration * 1000).rounded() / 1000)) s long"
            )
        }
        self.grid = grid
        self.start = start
        self.duration = duration
        every = request.every ?? (duration - start) / Double(grid.count)
        // A hair under: 2.1 / 0.7 is 3.0000000000000004 in doubles, three tiles, not four.
        let n = ((duration - start) / every * (1 - 1e-9)).rounded(.up)
        guard n.isFinite, n <= Double(Self.maxTiles) else {
            throw AspectError(
                .badParam,
                "every=\(NumberSyntax.text(every)) on a video of \(NumberSyntax.text(duration.rounded())) s makes over \(Self.maxTiles) tiles: give a larger every"
            )
        }
        // Without `every` the grid is the clip by construction: no rounding may add a tile.
        tiles = request.every == nil ? grid.count : max(1, Int(n))
    }

    /// The most tiles a storyboard may index, over all its sheets.
    public static let maxTiles = 10_000

    /// Tiles in all: as many as start inside the video.
    public let tiles: Int

    public var sheets: Int { (tiles + grid.count - 1) / grid.count }

    /// The moments on sheet `sheet`: a whole grid's, or the rest on the last.
    public func moments(sheet: Int) throws(AspectError) -> [Double] {
        guard sheet < sheets else {
            throw AspectError(
                .badParam,
                "sheet=\(sheet) is past the end: this storyboard has \(sheets) sheet\(sheets == 1 ? "" : "s")")
        }
        let first = sheet * grid.count
        return (first..<min(first + grid.count, tiles)).map { start + Double($0) * every }
    }

    /// One cue of the index: a tile's time range and its place on its sheet.
    public struct Cue: Equatable, Sendable {
        public var start: Double
        public var end: Double
        public var sheet: Int
        public var x: Int, y: Int, width: Int, height: Int
    }

    /// Every tile's cue, tiles `tile` apart on their sheets; the last ends with the video.
    public func cues(tile: Size) -> [Cue] {
        (0..<tiles).map { k in
            let (sheet, place) = (k / grid.count, k % grid.count)
            let from = start + Double(k) * every
            return Cue(
                start: from, end: min(from + every, duration), sheet: sheet,
                x: place % grid.columns * tile.width, y: place / grid.columns * tile.height,
                width: tile.width, height: tile.height)
        }
    }

    /// A sheet's size: the grid of tiles, whole whatever tiles the last sheet holds.
    public func sheetSize(tile: Size) -> Size {
        Size(width: grid.columns * tile.width, height: grid.rows * tile.height)
    }
}
