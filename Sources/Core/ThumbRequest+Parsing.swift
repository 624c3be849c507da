extension ThumbRequest {
    /// Every parameter name `/thumb` knows.
    public static let parameterNames: [String] = [
        "src", "w", "h", "ratio", "mode", "gravity", "fx", "fy", "upscale", "dpr", "shape",
        "radius", "bg", "format", "q", "crop", "rotate", "flip", "blur", "sharpen", "frames", "page",
        "t", "extend", "padding", "pixelate", "maxbytes", "trim", "wm", "faces", "passthrough", "profile", "thumbnail",
        "tiles", "every", "sheet", "sig",
    ]

    /// The longest `src` accepted, in UTF-8 bytes.
    public static let maxSourcePathBytes = 1024

    /// Parses and validates a raw query string (the part after `?`).
    public static func parse(query: some StringProtocol, limits: RequestLimits) throws(AspectError) -> ThumbRequest {
        try parse(try QueryParameters.decode(query), limits: limits)
    }

    /// Validates decoded parameters: every name known and given once, every value in
    /// range, and the combinations SPEC allows.
    public static func parse(_ params: QueryParameters, limits: RequestLimits) throws(AspectError) -> ThumbRequest {
        let values = try checkedValues(params)
        guard let src = values["src"] else {
            throw .badParam("src is required: the path of an image under the image root, e.g. src=photo.jpg")
        }
        try checkSourcePath(src)
        var r = ThumbRequest(src: src)
        // This order picks the error a query with several bad values gets: keep it, even
        // where a parameter is read away from its kin (dpr after the box, wm before bg).
        try readBox(values, limits, into: &r)
        try readExtras(values, limits, into: &r)
        try readSourceHandling(values, into: &r)
        if let v = values["wm"] { r.watermark = try parseWatermark(v, limits) }
        if let v = values["dpr"] { r.dpr = try decimal("dpr", v, 1...limits.maxDpr) }
        try readShape(values, limits, into: &r)
        try readOutput(values, limits, into: &r)
        try readBeforeGeometry(values, into: &r)
        try readAfterGeometry(values, into: &r)
        try readTimeAndPage(values, limits, into: &r)
        if let v = values["sig"] { r.signature = try parseSignature(v) }
        try checkCombinations(r, values)
        return r
    }

    /// The query as name → value: every name known, none given twice, no value empty.
    private static func checkedValues(_ params: QueryParameters) throws(AspectError) -> [String: String] {
        var values: [String: String] = [:]
        for (name, value) in params.pairs {
            guard parameterNames.contains(name) else {
                throw .badParam(
                    "unknown parameter \(quoted(name)); /thumb takes \(parameterNames.joined(separator: ", "))")
            }
            guard values[name] == nil else {
                throw .badParam("\(name) is given more than once; give it once")
            }
            guard !value.isEmpty else {
                throw .badParam("\(name) is empty; give it a value or leave it out")
            }
            values[name] = value
        }
        return values
    }

    /// The box and how the image fills it: w, h, ratio (refusing all three), mode,
    /// gravity, fx, fy, upscale. `dpr` is read later, after wm.
    private static func readBox(_ values: [String: String], _ limits: RequestLimits, into r: inout ThumbRequest)
        throws(AspectError)
    {
        let maxDim = limits.maxDimension
        if let v = values["w"] { r.width = try integer("w", v, 1...maxDim) }
        if let v = values["h"] { r.height = try integer("h", v, 1...maxDim) }
        if let v = values["ratio"] { r.ratio = try Ratio.parse(v) }
        if r.isOverdetermined { throw ThumbRequest.overdetermined }
        if let v = values["mode"] { r.mode = try choice("mode", v, Mode.self) }
        if let v = values["gravity"] { r.gravity = try choice("gravity", v, Gravity.self) }
        if let v = values["fx"] { r.focusX = try decimal("fx", v, 0...1) }
        if let v = values["fy"] { r.focusY = try decimal("fy", v, 0...1) }
        if let v = values["upscale"] { r.upscale = try flag("upscale", v) }
    }

    /// extend, faces, pixelate, trim, maxbytes, padding: read straight after the box.
    private static func readExtras(_ values: [String: String], _ limits: RequestLimits, into r: inout ThumbRequest)
        throws(AspectError)
    {
        if let v = values["extend"] { r.extend = try flag("extend", v) }
        if let v = values["faces"] { r.faces = try flag("faces", v) }
        if let v = values["pixelate"] { r.pixelate = try integer("pixelate", v, 2...256) }
        if let v = values["trim"] { r.trim = Trim(threshold: try decimal("trim", v, 0...100)) }
        if let v = values["maxbytes"] { r.maxBytes = try integer("maxbytes", v, 1024...(1 << 30)) }
        if let v = values["padding"] { r.padding = try parsePadding(v, maxDim: limits.maxDimension) }
    }

    /// `padding=N` or `T,R,B,L`; nil when every side is 0.
    private static func parsePadding(_ v: String, maxDim: Int) throws(AspectError) -> Insets? {
        let sides = v.split(separator: ",", omittingEmptySubsequences: false).map {
            NumberSyntax.integer($0).flatMap { (0...maxDim).contains($0) ? $0 : nil }
        }
        guard sides.count == 1 || sides.count == 4, sides.allSatisfy({ $0 != nil }) else {
            throw .badParam(
                "padding must be N or T,R,B,L, integers from 0 to \(maxDim) (CSS pixels), got \(quoted(v))")
        }
        let n = sides.compactMap { $0 }
        // No margin at all is no padding (the same request, the same key).
        return
            n.allSatisfy({ $0 == 0 })
            ? nil
            : n.count == 1
                ? Insets(top: n[0], right: n[0], bottom: n[0], left: n[0])
                : Insets(top: n[0], right: n[1], bottom: n[2], left: n[3])
    }

    /// How the source is taken: thumbnail (its embedded preview), profile (its colour
    /// profile kept or converted), passthrough (formats sent on unchanged).
    private static func readSourceHandling(_ values: [String: String], into r: inout ThumbRequest)
        throws(AspectError)
    {
        if let v = values["thumbnail"] {
            switch v {
            case "embedded": r.embeddedThumbnail = true
            case "none": r.embeddedThumbnail = false
            default: throw .badParam("thumbnail \(quoted(v)) must be embedded or none (the default)")
            }
        }
        if let v = values["profile"] {
            switch v {
            case "keep": r.keepProfile = true
            case "srgb": r.keepProfile = false
            default: throw .badParam("profile \(quoted(v)) must be srgb (converted, the default) or keep")
            }
        }
        if let v = values["passthrough"] {
            let names = v.split(separator: ",", omittingEmptySubsequences: false).map {
                $0 == "jpg" ? "jpeg" : String($0)
            }
            guard !names.isEmpty, names.allSatisfy(ThumbRequest.passthroughFormats.contains) else {
                throw .badParam(
                    "passthrough \(quoted(v)) must list formats from \(ThumbRequest.passthroughFormats.sorted().joined(separator: ", ")) (an SVG is always drawn)"
                )
            }
            r.passthrough = Set(names).sorted()
        }
    }

    /// `wm`: the name of a configured watermark.
    private static func parseWatermark(_ v: String, _ limits: RequestLimits) throws(AspectError) -> String {
        guard limits.watermarks[v] != nil else {
            let names = limits.watermarks.keys.sorted()
            throw .badParam(
                "wm \(quoted(v)) is not a configured watermark; "
                    + (names.isEmpty
                        ? "none are configured (watermarks)"
                        : "the configured ones are \(names.joined(separator: ", "))"))
        }
        return v
    }

    /// The shape: shape, radius, bg.
    private static func readShape(_ values: [String: String], _ limits: RequestLimits, into r: inout ThumbRequest)
        throws(AspectError)
    {
        if let v = values["shape"] { r.shape = try choice("shape", v, Shape.self) }
        if let v = values["radius"] { r.radius = try integer("radius", v, 0...limits.maxDimension) }
        if let v = values["bg"] {
            guard let c = Color(hex: v) else {
                throw .badParam("bg must be a hex colour RRGGBB or RRGGBBAA (ff8800, 00000080), got \(quoted(v))")
            }
            r.background = c
        }
    }

    /// The output: format and q. (`maxbytes` is read earlier, with the extras.)
    private static func readOutput(_ values: [String: String], _ limits: RequestLimits, into r: inout ThumbRequest)
        throws(AspectError)
    {
        r.format = limits.defaultFormat
        if let v = values["format"] {
            guard let f = FormatChoice(rawValue: v), FormatChoice.native.contains(f) else {
                let allowed = FormatChoice.native.map(\.rawValue).joined(separator: ", ")
                throw .badParam("format must be one of \(allowed), got \(quoted(v))")
            }
            r.format = f
        }
        if let v = values["q"] {
            if v == "auto" { r.autoQuality = true } else { r.quality = try integer("q", v, 1...100) }
        }
    }

    /// What happens to the source before the geometry: crop, rotate, flip. (`trim` is
    /// read earlier, with the extras.)
    private static func readBeforeGeometry(_ values: [String: String], into r: inout ThumbRequest)
        throws(AspectError)
    {
        if let v = values["crop"] { r.region = try parseCrop(v) }
        if let v = values["rotate"] {
            guard let n = NumberSyntax.integer(Substring(v)), [90, 180, 270].contains(n) else {
                throw .badParam("rotate must be 90, 180 or 270 (clockwise), got \(quoted(v))")
            }
            r.rotate = n
        }
        if let v = values["flip"] { r.flip = try choice("flip", v, Flip.self) }
    }

    /// `crop=x,y,w,h`: fractions of the image, inside it.
    private static func parseCrop(_ v: String) throws(AspectError) -> Region {
        let parts = v.split(separator: ",", omittingEmptySubsequences: false).map { NumberSyntax.decimal($0) }
        guard parts.count == 4, let x = parts[0], let y = parts[1], let w = parts[2], let h = parts[3],
            [x, y, w, h].allSatisfy({ (0...1).contains($0) }), w > 0, h > 0
        else {
            throw .badParam(
                "crop must be x,y,w,h: four decimals 0 … 1 of the image, w and h above 0 (crop=0.25,0,0.5,1), got \(quoted(v))"
            )
        }
        guard x + w <= 1 + 1e-9, y + h <= 1 + 1e-9 else {
            throw .badParam("crop \(quoted(v)) leaves the image: x + w and y + h must be at most 1")
        }
        return Region(x: x, y: y, width: w, height: h)
    }

    /// What happens after the geometry: blur or sharpen, and at most one of them and
    /// pixelate (read earlier, with the extras).
    private static func readAfterGeometry(_ values: [String: String], into r: inout ThumbRequest)
        throws(AspectError)
    {
        if let v = values["blur"] { r.blur = try decimal("blur", v, 0.3...100) }
        if let v = values["sharpen"] { r.sharpen = try decimal("sharpen", v, 0.3...10) }
        if r.blur != nil, r.sharpen != nil {
            throw .badParam("blur and sharpen are both given; give one of them")
        }
        if r.pixelate != nil, r.blur != nil || r.sharpen != nil {
            throw .badParam("pixelate is given with \(r.blur != nil ? "blur" : "sharpen"); give one of them")
        }
    }

    /// Which part of the source: frames, t, page.
    private static func readTimeAndPage(
        _ values: [String: String], _ limits: RequestLimits, into r: inout ThumbRequest
    ) throws(AspectError) {
        if let v = values["frames"] {
            // 1: an animation's first frame; 2 … the frame limit: a video's preview.
            guard let n = NumberSyntax.integer(Substring(v)), (1...limits.maxAnimationFrames).contains(n) else {
                throw .badParam(
                    "frames must be 1 (the first frame of an animation) or, on a video, 2 to "
                        + "\(limits.maxAnimationFrames) (a preview of that many frames), got \(quoted(v))")
            }
            if n == 1 { r.firstFrameOnly = true } else { r.frameCount = n }
        }
        if let v = values["t"] { r.time = try decimal("t", v, 0...ThumbRequest.maxSeconds) }
        if let v = values["tiles"] { r.tiles = try Grid.parse(v, limits) }
        if let v = values["every"] { r.every = try decimal("every", v, 0.001...ThumbRequest.maxSeconds) }
        if let v = values["sheet"] {
            guard let n = NumberSyntax.integer(Substring(v)), (0...ThumbRequest.maxPage).contains(n) else {
                throw .badParam(
                    "sheet must be an integer from 0 (the first) to \(ThumbRequest.maxPage), got \(quoted(v))")
            }
            r.sheet = n
        }
        if let v = values["page"] {
            guard let n = NumberSyntax.integer(Substring(v)), (1...ThumbRequest.maxPage).contains(n) else {
                throw .badParam("page must be an integer from 1 to \(ThumbRequest.maxPage), got \(quoted(v))")
            }
            r.page = n
        }
    }

    /// `sig`: base64url, at most 128 bytes.
    private static func parseSignature(_ v: String) throws(AspectError) -> String {
        guard v.utf8.count <= 128, v.utf8.allSatisfy(isBase64URL) else {
            throw .badParam("sig must be base64url (A-Z a-z 0-9 - _), got \(quoted(v))")
        }
        return v
    }

    /// Combinations: say so rather than ignore what the client meant.
    private static func checkCombinations(_ r: ThumbRequest, _ values: [String: String]) throws(AspectError) {
        if !r.gravity.isCompass, r.mode != .fill {
            throw .badParam("gravity=\(r.gravity.rawValue) only applies to mode=fill, got mode=\(r.mode.rawValue)")
        }
        if values["fx"] != nil || values["fy"] != nil, r.gravity != .focus {
            throw .badParam("fx and fy set the focal point of gravity=focus; add gravity=focus or leave them out")
        }
        if r.radius != nil, r.shape != .rounded {
            throw .badParam("radius is the corner radius of shape=rounded; add shape=rounded or leave it out")
        }
        if r.tiles == nil, values["every"] != nil || values["sheet"] != nil {
            throw .badParam("every and sheet belong to a storyboard: add tiles=COLSxROWS or leave them out")
        }
        if r.tiles != nil, r.trim != nil {
            throw .badParam("trim applies to still images; tiles makes a storyboard of a video")
        }
        if r.tiles != nil, values["frames"] != nil {
            throw .badParam("tiles makes a storyboard and frames a preview: give one of them")
        }
        if r.tiles != nil, r.format.isVideoPreview {
            throw .badParam("a storyboard is an image: format=\(r.format.rawValue) makes a preview (frames=N)")
        }
    }

    /// Refuses paths that could leave the root or name hidden files. The server checks
    /// the resolved real path again at open time; this is the first line, on the string.
    public static func checkSourcePath(_ src: String) throws(AspectError) {
        func refuse(_ why: String) -> AspectError {
            AspectError(.forbiddenPath, "src \(quoted(src)) is refused: \(why)")
        }
        guard src.utf8.count <= maxSourcePathBytes else {
            throw refuse("longer than \(maxSourcePathBytes) bytes")
        }
        guard !src.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw refuse("it contains a control character (NUL, CR, LF, …)")
        }
        guard !src.hasPrefix("/") else { throw refuse("it must be relative to the image root, not absolute") }
        guard !src.contains("\\") else { throw refuse("backslashes are not path separators here") }
        for segment in src.split(separator: "/", omittingEmptySubsequences: false) {
            if segment == ".." { throw refuse("'..' may not appear in it") }
            if segment.isEmpty { throw refuse("it has an empty segment ('//' or a trailing '/')") }
            if segment.hasPrefix(".") { throw refuse("names starting with '.' are not served") }
        }
    }

    private static func integer(_ name: String, _ v: String, _ range: ClosedRange<Int>) throws(AspectError) -> Int {
        guard let n = NumberSyntax.integer(Substring(v)), range.contains(n) else {
            throw .badParam(
                "\(name) must be an integer from \(range.lowerBound) to \(range.upperBound), got \(quoted(v))")
        }
        return n
    }

    /// `0`, `1`, `false` or `true`.
    private static func flag(_ name: String, _ v: String) throws(AspectError) -> Bool {
        switch v {
        case "1", "true": return true
        case "0", "false": return false
        default: throw .badParam("\(name) must be 0, 1, false or true, got \(quoted(v))")
        }
    }

    private static func decimal(_ name: String, _ v: String, _ range: ClosedRange<Double>) throws(AspectError) -> Double
    {
        guard let x = NumberSyntax.decimal(Substring(v)), range.contains(x) else {
            throw .badParam(
                "\(name) must be a decimal from \(decimalString(range.lowerBound)) to \(decimalString(range.upperBound)), got \(quoted(v))"
            )
        }
        return x
    }

    private static func choice<E: RawRepresentable & CaseIterable>(_ name: String, _ v: String, _: E.Type)
        throws(AspectError) -> E
    where E.RawValue == String {
        guard let e = E(rawValue: v) else {
            let allowed = E.allCases.map(\.rawValue).joined(separator: ", ")
            throw .badParam("\(name) must be one of \(allowed), got \(quoted(v))")
        }
        return e
    }

    private static func isBase64URL(_ c: UInt8) -> Bool {
        switch c {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, UInt8(ascii: "-"), UInt8(ascii: "_"): true
        default: false
        }
    }
}

extension ThumbRequest {
    /// `w`, `h` and `ratio` all given: the box is named twice. The one check, which the
    /// parser makes and the geometry makes again for a request built in code.
    public var isOverdetermined: Bool { width != nil && height != nil && ratio != nil }

    static let overdetermined = AspectError.badParam("w, h and ratio are all given; give at most two of them")
}
