import Core

/// A thumbor URL's path read by thumbor 7.8's grammar (SPEC: thumbor URLs), part by part
/// in its order, each optional:
/// `/(unsafe|HASH)/[trim[:top-left|bottom-right][:N]/][AxB:CxD/][adaptive-][full-]fit-in/`
/// `[-][W|orig]x[-][H|orig]/[left|right|center/][top|bottom|middle/][smart/][filters:…/]IMAGE`.
/// What it holds is the URL as thumbor reads it; what it renders is decided elsewhere.
/// Like thumbor's own pattern, a part is taken where it can be: an image path whose first
/// folder is called `smart` is read as the `smart` part.
public struct ThumborPath: Equatable, Sendable {
    public enum Signature: Equatable, Sendable {
        case unsafe
        /// URL-safe base64 of HMAC-SHA1, padded: 28 characters.
        case hash(String)
    }

    public enum TrimCorner: String, Equatable, Sendable {
        case topLeft = "top-left"
        case bottomRight = "bottom-right"
    }

    public struct Trim: Equatable, Sendable {
        /// Whose colour is the border's: thumbor's default is the top-left pixel.
        public var corner: TrimCorner = .topLeft
        /// How far a pixel's colour may be from the border's and still be trimmed.
        public var tolerance = 0

        public init(corner: TrimCorner = .topLeft, tolerance: Int = 0) {
            self.corner = corner
            self.tolerance = tolerance
        }
    }

    /// `AxB:CxD`: the manual crop's left, top, right and bottom, in the source's pixels.
    public struct Crop: Equatable, Sendable {
        public var left: Int
        public var top: Int
        public var right: Int
        public var bottom: Int

        public init(left: Int, top: Int, right: Int, bottom: Int) {
            (self.left, self.top, self.right, self.bottom) = (left, top, right, bottom)
        }
    }

    public enum FitIn: String, Equatable, Sendable {
        case fitIn = "fit-in"
        case full = "full-fit-in"
        case adaptive = "adaptive-fit-in"
        case adaptiveFull = "adaptive-full-fit-in"
    }

    /// One side of `WxH`: left out or 0 (free: from the other side and the ratio), `orig`
    /// (the source's own), or pixels.
    public enum Side: Equatable, Sendable {
        case free
        case orig
        case pixels(Int)
    }

    public enum HAlign: String, Equatable, Sendable { case left, center, right }
    public enum VAlign: String, Equatable, Sendable { case top, middle, bottom }

    /// `name(arg,…)`, its arguments as written.
    public struct Filter: Equatable, Sendable {
        public var name: String
        public var arguments: [String]

        public init(name: String, arguments: [String]) {
            self.name = name
            self.arguments = arguments
        }
    }

    public var signature: Signature
    /// What the signature covers: the path after the signature's segment, without its
    /// leading `/`, exactly as sent (thumbor signs `300x200/smart/a.jpg`).
    public var signedPath: Substring
    public var trim: Trim?
    public var crop: Crop?
    public var fitIn: FitIn?
    public var width: Side = .free
    public var height: Side = .free
    public var flipHorizontally = false
    public var flipVertically = false
    public var halign: HAlign?
    public var valign: VAlign?
    public var smart = false
    public var filters: [Filter] = []
    /// The image part, as sent (escapes kept): a path under `images.root`.
    public var image: Substring

    /// The sides and filters thumbor's own pattern caps (its digits are unbounded; a
    /// size this long is a mistake or an attack).
    static let maxDigits = 6

    /// Reads `path` (the raw request target's path, from its leading `/`); a 403 for a
    /// missing or malformed signature part, a 400 naming the part for anything else.
    public static func parse(_ path: Substring) throws(AspectError) -> ThumborPath {
        guard path.first == "/" else { throw .badParam("a thumbor URL's path starts with /") }
        let afterSlash = path.dropFirst()
        guard let cut = afterSlash.firstIndex(of: "/") else {
            throw AspectError(.badSignature, "a thumbor URL starts with /unsafe/ or /HASH/, then the image")
        }
        let first = afterSlash[..<cut]
        let signature: Signature
        if first == "unsafe" {
            signature = .unsafe
        } else if first.utf8.count == 28, first.utf8.allSatisfy(Self.isHashCharacter) {
            signature = .hash(String(first))
        } else {
            throw AspectError(
                .badSignature, "a thumbor URL starts with /unsafe/ or /HASH/ (28 characters of URL-safe base64)")
        }
        let signed = afterSlash[afterSlash.index(after: cut)...]
        var url = ThumborPath(signature: signature, signedPath: signed, image: "")
        var rest = signed

        /// The next segment, if `read` takes it (then it is consumed).
        func take(_ read: (Substring) throws(AspectError) -> Bool) throws(AspectError) {
            guard let slash = rest.firstIndex(of: "/") else { return }
            if try read(rest[..<slash]) { rest = rest[rest.index(after: slash)...] }
        }
        for reserved in ["debug", "meta"] {
            try take { s throws(AspectError) in
                guard s == reserved else { return false }
                throw .badParam("thumbor's \(reserved) is not answered here; leave it out")
            }
        }
        try take { s throws(AspectError) in try url.readTrim(s) }
        try take { s in url.readCrop(s) }
        try take { s in
            guard let f = FitIn(rawValue: String(s)) else { return false }
            url.fitIn = f
            return true
        }
        try take { s in url.readSize(s) }
        try take { s in
            guard let a = HAlign(rawValue: String(s)) else { return false }
            url.halign = a
            return true
        }
        try take { s in
            guard let a = VAlign(rawValue: String(s)) else { return false }
            url.valign = a
            return true
        }
        try take { s in
            guard s == "smart" else { return false }
            url.smart = true
            return true
        }
        if rest.hasPrefix("filters:") {
            // As thumbor's pattern reads them: up to the first `)/` (an argument may hold a /).
            guard let end = rest.firstRange(of: ")/") else {
                throw .badParam("filters: the filters part ends with ) and a /, then the image")
            }
            url.filters = try Self.filters(rest[rest.index(rest.startIndex, offsetBy: 8)..<end.lowerBound] + ")")
            rest = rest[end.upperBound...]
        }
        guard !rest.isEmpty else { throw .badParam("the image: a thumbor URL ends with the image's path") }
        url.image = rest
        return url
    }

    static func isHashCharacter(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "="):
            true
        default: false
        }
    }

    static func number(_ s: Substring) -> Int? {
        guard !s.isEmpty, s.utf8.count <= maxDigits, s.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int(s)
    }

    /// `trim`, `trim:top-left`, `trim:bottom-right`, each with `:N` or not. thumbor 7.8
    /// reads the part after `trim:` as the corner whatever it is, and anything but
    /// `top-left` as the bottom-right one: `trim:15` trims by the bottom-right pixel with
    /// no tolerance there, and so it does here.
    mutating func readTrim(_ s: Substring) throws(AspectError) -> Bool {
        guard s == "trim" || s.hasPrefix("trim:") else { return false }
        var t = Trim()
        let parts = s.split(separator: ":", omittingEmptySubsequences: false).dropFirst()
        guard parts.count <= 2 else {
            throw .badParam("trim takes trim[:top-left|bottom-right][:tolerance], got \(s)")
        }
        if let corner = parts.first {
            if let c = TrimCorner(rawValue: String(corner)) {
                t.corner = c
            } else if parts.count == 1, Self.number(corner) != nil {
                t.corner = .bottomRight
            } else {
                throw .badParam("trim takes trim[:top-left|bottom-right][:tolerance], got \(s)")
            }
        }
        if parts.count == 2 {
            guard let n = Self.number(parts[parts.index(after: parts.startIndex)]), n <= 442 else {
                throw .badParam("trim: the tolerance is a number from 0 to 442, got \(s)")
            }
            t.tolerance = n
        }
        trim = t
        return true
    }

    /// `AxB:CxD`, all four numbers.
    mutating func readCrop(_ s: Substring) -> Bool {
        let corners = s.split(separator: ":", omittingEmptySubsequences: false)
        guard corners.count == 2 else { return false }
        let a = corners[0].split(separator: "x", omittingEmptySubsequences: false)
        let b = corners[1].split(separator: "x", omittingEmptySubsequences: false)
        guard a.count == 2, b.count == 2, let l = Self.number(a[0]), let t = Self.number(a[1]),
            let r = Self.number(b[0]), let bottom = Self.number(b[1])
        else { return false }
        crop = Crop(left: l, top: t, right: r, bottom: bottom)
        return true
    }

    /// `[-][W|orig]x[-][H|orig]`, each side left out, a number or `orig`.
    mutating func readSize(_ s: Substring) -> Bool {
        guard let x = s.firstIndex(of: "x") else { return false }
        func side(_ t: Substring) -> (flip: Bool, side: Side)? {
            let flip = t.first == "-"
            let v = flip ? t.dropFirst() : t
            if v.isEmpty { return (flip, .free) }
            if v == "orig" { return (flip, .orig) }
            guard let n = Self.number(v) else { return nil }
            return (flip, n == 0 ? .free : .pixels(n))
        }
        guard let w = side(s[..<x]), let h = side(s[s.index(after: x)...]) else { return false }
        (flipHorizontally, width, flipVertically, height) = (w.flip, w.side, h.flip, h.side)
        return true
    }

    /// `name(args):name(args)…`: every name and its arguments, split at the top level.
    static func filters(_ text: Substring) throws(AspectError) -> [Filter] {
        var out: [Filter] = []
        var rest = text
        while !rest.isEmpty {
            guard let open = rest.firstIndex(of: "("), let close = rest[open...].firstIndex(of: ")") else {
                throw .badParam("filters: each filter is name(arguments), got \(rest)")
            }
            let name = rest[..<open]
            guard !name.isEmpty, name.utf8.allSatisfy({ ($0 >= 97 && $0 <= 122) || $0 == 95 }) else {
                throw .badParam("filters: \(name) is not a filter's name")
            }
            let args = rest[rest.index(after: open)..<close]
            out.append(
                Filter(
                    name: String(name),
                    arguments: args.isEmpty
                        ? [] : args.split(separator: ",", omittingEmptySubsequences: false).map(String.init)))
            rest = rest[rest.index(after: close)...]
            if rest.first == ":" {
                rest = rest.dropFirst()
                guard !rest.isEmpty else { throw .badParam("filters: a : with no filter after it") }
            } else if !rest.isEmpty {
                throw .badParam("filters: filters are separated by :, got \(rest)")
            }
        }
        return out
    }
}
