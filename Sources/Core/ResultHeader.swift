/// What an encoded result says of itself in its first bytes: its format and its size in
/// pixels, read without decoding (SPEC: Isolation, "every answer is distrusted": the
/// service holds a worker's result to the plan before serving it). Every read is checked:
/// any bytes, however made, give an answer or nil, never a trap.
public struct ResultHeader: Equatable, Sendable {
    public var format: ImageFormat
    /// Nil where the format is known but its size could not be read.
    public var size: Size?

    /// The format by its magic bytes, and the size where the header gives it.
    public init?(_ bytes: [UInt8]) { self.init(bytes[...]) }

    /// The format by its magic bytes, and the size where the header gives it.
    public init?(_ bytes: ArraySlice<UInt8>) {
        // All of it: libtiff writes its directory after the pixels, and a large ICC
        // profile can push a JPEG's frame header or an AVIF's properties far in.
        let b = Bytes(bytes)
        if b.starts(with: [0xFF, 0xD8, 0xFF]) {
            (format, size) = (.jpeg, Self.jpeg(b))
        } else if b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            (format, size) = (.png, b.u32be(16).flatMap { w in b.u32be(20).map { Self.size(w, $0) } } ?? nil)
        } else if b.starts(with: Array("GIF87a".utf8)) || b.starts(with: Array("GIF89a".utf8)) {
            (format, size) = (.gif, b.u16le(6).flatMap { w in b.u16le(8).map { Self.size(w, $0) } } ?? nil)
        } else if b.starts(with: Array("RIFF".utf8)), b.matches(Array("WEBP".utf8), at: 8) {
            (format, size) = (.webp, Self.webp(b))
        } else if b.starts(with: Array("II*\u{0}".utf8)) || b.starts(with: Array("MM\u{0}*".utf8)) {
            (format, size) = (.tiff, Self.tiff(b))
        } else if b.matches(Array("ftyp".utf8), at: 4), b.matches(Array("avif".utf8), at: 8) {
            (format, size) = (.avif, Self.avif(b))
        } else if b.starts(with: [0xFF, 0x0A]) {
            (format, size) = (.jxl, Self.jxlCodestream(b, at: 2))
        } else if b.starts(with: [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) {
            (format, size) = (.jxl, Self.jxlContainer(b))
        } else if b.matches(Array("ftyp".utf8), at: 4), b.matches(Array("isom".utf8), at: 8) {
            // A preview as MP4 (FFmpeg's mp4 muxer writes the isom brand); its sides are
            // not read back: the service serves a video's bytes, it reads nothing from them.
            (format, size) = (.mp4, nil)
        } else if b.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) {
            (format, size) = (.webm, nil)
        } else {
            return nil
        }
    }

    static func size(_ w: Int, _ h: Int) -> Size? { w >= 1 && h >= 1 ? Size(width: w, height: h) : nil }

    /// The first start-of-frame marker's sides (SOF0 … SOF15 but DHT, JPG and DAC).
    static func jpeg(_ b: Bytes) -> Size? {
        var i = 2
        while i + 9 < b.count {
            guard b[i] == 0xFF else { return nil }
            let marker = b[i + 1]
            if marker == 0xFF {
                i += 1
                continue
            }
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                return b.u16be(i + 7).flatMap { w in b.u16be(i + 5).map { size(w, $0) } } ?? nil
            }
            guard let length = b.u16be(i + 2), length >= 2 else { return nil }
            i += 2 + length
        }
        return nil
    }

    /// VP8X's canvas, or the one image's size (VP8, VP8L).
    static func webp(_ b: Bytes) -> Size? {
        if b.matches(Array("VP8X".utf8), at: 12) {
            return b.u24le(24).flatMap { w in b.u24le(27).map { size(w + 1, $0 + 1) } } ?? nil
        }
        if b.matches(Array("VP8L".utf8), at: 12), b[20] == 0x2F, let bits = b.u32le(21) {
            return size((bits & 0x3FFF) + 1, (bits >> 14 & 0x3FFF) + 1)
        }
        if b.matches(Array("VP8 ".utf8), at: 12), b.matches([0x9D, 0x01, 0x2A], at: 23) {
            return b.u16le(26).flatMap { w in b.u16le(28).map { size(w & 0x3FFF, $0 & 0x3FFF) } } ?? nil
        }
        return nil
    }

    /// The first image file directory's ImageWidth (256) and ImageLength (257).
    static func tiff(_ b: Bytes) -> Size? {
        let little = b[0] == 0x49
        func u16(_ i: Int) -> Int? { little ? b.u16le(i) : b.u16be(i) }
        func u32(_ i: Int) -> Int? { little ? b.u32le(i) : b.u32be(i) }
        guard let ifd = u32(4), let count = u16(ifd) else { return nil }
        var (width, height): (Int?, Int?) = (nil, nil)
        for k in 0..<min(count, 512) {
            let e = ifd + 2 + 12 * k
            guard let tag = u16(e), let type = u16(e + 2) else { return nil }
            let value = type == 3 ? u16(e + 8) : type == 4 ? u32(e + 8) : nil
            if tag == 256 { width = value }
            if tag == 257 { height = value }
        }
        return width.flatMap { w in height.map { size(w, $0) } } ?? nil
    }

    /// The `ispe` property of the first image (ISO BMFF: meta › iprp › ipco › ispe).
    static func avif(_ b: Bytes) -> Size? {
        // Boxes are walked by their sizes; the path to ispe goes into these containers.
        let containers: [String: Int] = ["meta": 4, "iprp": 0, "ipco": 0]
        func walk(_ start: Int, _ end: Int, _ depth: Int) -> Size? {
            var i = start
            while i + 8 <= end, depth < 6 {
                guard let length = b.u32be(i), length >= 8, i + length <= end else { return nil }
                let type = String(decoding: [b[i + 4], b[i + 5], b[i + 6], b[i + 7]], as: UTF8.self)
                if type == "ispe" {
                    return b.u32be(i + 12).flatMap { w in b.u32be(i + 16).map { size(w, $0) } } ?? nil
                }
                if let skip = containers[type], let found = walk(i + 8 + skip, i + length, depth + 1) { return found }
                i += length
            }
            return nil
        }
        return walk(0, b.count, 0)
    }

    /// The codestream in a JPEG XL container's `jxlc` box, or its first `jxlp` part.
    static func jxlContainer(_ b: Bytes) -> Size? {
        var i = 0
        while i + 8 <= b.count {
            guard let length = b.u32be(i), length >= 8 || length == 0 else { return nil }
            let type = String(decoding: [b[i + 4], b[i + 5], b[i + 6], b[i + 7]], as: UTF8.self)
            if type == "jxlc" { return b.matches([0xFF, 0x0A], at: i + 8) ? jxlCodestream(b, at: i + 10) : nil }
            if type == "jxlp" { return b.matches([0xFF, 0x0A], at: i + 12) ? jxlCodestream(b, at: i + 14) : nil }
            guard length >= 8 else { return nil }
            i += length
        }
        return nil
    }

    /// A JPEG XL codestream's SizeHeader, whose bits follow the signature, least
    /// significant first: a height (in eighths, or a U32 of four widths), then a ratio
    /// that gives the width, or the width written the same way.
    static func jxlCodestream(_ b: Bytes, at start: Int) -> Size? {
        var bit = start * 8
        func read(_ n: Int) -> Int? {
            var v = 0
            for k in 0..<n {
                let byte = (bit + k) / 8
                guard byte < b.count else { return nil }
                v |= Int(b[byte] >> UInt8((bit + k) % 8) & 1) << k
            }
            bit += n
            return v
        }
        func side(small: Bool) -> Int? {
            if small { return read(5).map { ($0 + 1) * 8 } }
            guard let selector = read(2) else { return nil }
            return read([9, 13, 18, 30][selector]).map { $0 + 1 }
        }
        guard let div8 = read(1), let height = side(small: div8 == 1), let ratio = read(3) else { return nil }
        let ratios: [(Int, Int)] = [(1, 1), (12, 10), (4, 3), (3, 2), (16, 9), (5, 4), (2, 1)]
        if ratio > 0 {
            let (n, d) = ratios[ratio - 1]
            return size(height * n / d, height)
        }
        guard let width = side(small: div8 == 1) else { return nil }
        return size(width, height)
    }

    /// Bytes read only where they are: out of range is nil (or 0 for a single byte).
    /// Over the caller's storage, not a copy (a result may be 64 MiB); positions from 0.
    struct Bytes {
        let bytes: ArraySlice<UInt8>
        init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }
        var count: Int { bytes.count }
        subscript(_ i: Int) -> UInt8 { i >= 0 && i < bytes.count ? bytes[bytes.startIndex + i] : 0 }
        func starts(with prefix: [UInt8]) -> Bool { matches(prefix, at: 0) }
        func matches(_ part: [UInt8], at i: Int) -> Bool {
            let start = bytes.startIndex + i
            return i >= 0 && i <= bytes.count - part.count && bytes[start..<(start + part.count)].elementsEqual(part)
        }
        private func value(_ i: Int, _ n: Int, big: Bool) -> Int? {
            guard i >= 0, i <= bytes.count - n else { return nil }
            return (0..<n).reduce(0) { v, k in v | Int(self[i + k]) << (8 * (big ? n - 1 - k : k)) }
        }
        func u16be(_ i: Int) -> Int? { value(i, 2, big: true) }
        func u16le(_ i: Int) -> Int? { value(i, 2, big: false) }
        func u24le(_ i: Int) -> Int? { value(i, 3, big: false) }
        func u32be(_ i: Int) -> Int? { value(i, 4, big: true) }
        func u32le(_ i: Int) -> Int? { value(i, 4, big: false) }
    }
}
