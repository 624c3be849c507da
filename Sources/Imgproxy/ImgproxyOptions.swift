import Core
import Foundation

/// Reads imgproxy's options one by one into the geometry and the rest of the request,
/// with imgproxy's argument rules (`options/parser/apply.go`); every refusal is a 400 that
/// names the option.
struct OptionReader {
    let settings: ImgproxyURL.Settings
    let limits: RequestLimits
    let now: Int64
    var geometry = ImgproxyGeometry()
    var request = ThumbRequest(src: "")
    var expires: Int64?
    var filename: String?
    var attachment = false

    init(settings: ImgproxyURL.Settings, limits: RequestLimits, now: Int64) {
        self.settings = settings
        self.limits = limits
        self.now = now
        // With no format, imgproxy keeps the source's (SPEC: imgproxy URLs).
        request.format = .source
    }

    func bad(_ name: String, _ args: [String], _ why: String) -> AspectError {
        AspectError(.badParam, "imgproxy option \(quoted(([name] + args).joined(separator: ":"))): \(why)")
    }

    func count(_ name: String, _ args: [String], _ range: ClosedRange<Int>) throws(AspectError) {
        guard range.contains(args.count) else {
            throw bad(
                name, args,
                "takes \(range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)") argument(s)"
            )
        }
    }

    /// Go's `strconv.ParseBool`; imgproxy reads anything else as false with a warning, the
    /// dialect refuses it.
    func bool(_ name: String, _ v: String) throws(AspectError) -> Bool {
        switch v {
        case "1", "t", "T", "true", "TRUE", "True": return true
        case "0", "f", "F", "false", "FALSE", "False": return false
        default: throw bad(name, [v], "must be a boolean (1, 0, true, false, t, f)")
        }
    }

    func int(_ name: String, _ v: String, min low: Int = 0, max high: Int = Int(Int32.max)) throws(AspectError) -> Int {
        guard let n = Int(v), n >= low, n <= high else {
            throw bad(name, [v], "must be an integer from \(low) to \(high)")
        }
        return n
    }

    /// A decimal argument: at least `low` (above it with `above`) and at most
    /// `Self.largestDecimal`, so no later arithmetic sees a number far beyond any image
    /// (1e308 was read as a crop size, and trapped converting to an Int).
    func float(_ name: String, _ v: String, min low: Double = 0, above: Bool = false) throws(AspectError) -> Double {
        guard let x = Double(v), x.isFinite, above ? x > low : x >= low, x <= Self.largestDecimal else {
            throw bad(
                name, [v],
                "must be a number \(above ? "above" : "from") \(decimalString(low)) "
                    + "\(above ? "and at most" : "to") \(decimalString(Self.largestDecimal))")
        }
        return x
    }

    /// The largest decimal any option takes (and the largest offset, either way): far
    /// beyond every image's size in pixels and every sensible zoom.
    static let largestDecimal = 1_000_000.0

    /// A gravity's offset: a number within ±`largestDecimal`.
    func offset(_ v: String) -> Double? {
        guard let x = Double(v), x.isFinite, abs(x) <= Self.largestDecimal else { return nil }
        return x
    }

    func gravity(_ name: String, _ args: [String], allowSmart: Bool = true) throws(AspectError) -> ImgproxyGravity {
        guard let first = args.first, let kind = ImgproxyGravity.Kind(rawValue: first), allowSmart || !kind.isFound
        else {
            throw bad(
                name, args,
                "the gravity must be one of ce, no, so, ea, we, noea, nowe, soea, sowe"
                    + (allowSmart ? ", sm, obj:face, fp:X:Y" : ", fp:X:Y"))
        }
        var g = ImgproxyGravity(kind)
        switch kind {
        case .sm: if args.count > 1 { throw bad(name, args, "sm takes no offsets") }
        case .obj:
            // imgproxy Pro names its detector's classes; the one Aspect finds is `face`.
            guard args.dropFirst().allSatisfy({ $0 == "face" }) else {
                throw bad(name, args, "obj finds faces here: give obj or obj:face")
            }
        case .fp:
            guard args.count == 3, let x = Double(args[1]), let y = Double(args[2]), (0...1).contains(x),
                (0...1).contains(y)
            else { throw bad(name, args, "fp takes X and Y from 0 to 1") }
            (g.x, g.y) = (x, y)
        default:
            guard args.count <= 3 else { throw bad(name, args, "a gravity takes at most two offsets") }
            if args.count > 1, !args[1].isEmpty {
                guard let x = offset(args[1]) else {
                    throw bad(name, args, "the X offset must be a number from -1000000 to 1000000")
                }
                g.x = x
            }
            if args.count > 2, !args[2].isEmpty {
                guard let y = offset(args[2]) else {
                    throw bad(name, args, "the Y offset must be a number from -1000000 to 1000000")
                }
                g.y = y
            }
        }
        return g
    }

    /// The presets being expanded, outermost first: one that names itself again, directly
    /// or not, is skipped there, as imgproxy skips it.
    var presetChain: [String] = []
    /// Every preset used, in order.
    var usedPresets: [String] = []

    mutating func applyPreset(_ name: String, _ text: String) throws(AspectError) {
        guard !presetChain.contains(name) else { return }
        presetChain.append(name)
        usedPresets.append(name)
        defer { presetChain.removeLast() }
        for part in text.split(separator: "/") where !part.isEmpty {
            let args = part.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            try apply(args[0], Array(args.dropFirst()))
        }
    }

    /// One option: `name` as written (a short name too) and its arguments, read by that
    /// option's own reader as imgproxy's `applyURLOption` does (the geometry's in
    /// `ImgproxyOptions+Geometry.swift`).
    mutating func apply(_ written: String, _ args: [String]) throws(AspectError) {
        guard let name = ImgproxyURL.names[written] else {
            throw AspectError(
                .badParam,
                "imgproxy option \(quoted(written)) is not supported here; the supported ones are listed in docs/api.md (imgproxy URLs)"
            )
        }
        guard !args.isEmpty else { throw bad(written, args, "needs an argument") }
        switch name {
        case "resize": try applyResize(written, args)
        case "size": try applySize(written, args)
        case "resizing_type": try applyResizingType(written, args)
        case "width": try applyDimension(written, args, \.width)
        case "height": try applyDimension(written, args, \.height)
        case "min-width": try applyDimension(written, args, \.minWidth)
        case "min-height": try applyDimension(written, args, \.minHeight)
        case "zoom": try applyZoom(written, args)
        case "dpr": try applyDpr(written, args)
        case "enlarge": try applyEnlarge(written, args)
        case "extend", "extend_aspect_ratio": try applyExtend(name, written, args)
        case "gravity": geometry.gravity = try gravity(written, args)
        case "crop": try applyCrop(written, args)
        case "trim": try applyTrim(written, args)
        case "padding": try applyPadding(written, args)
        case "auto_rotate": try applyAutoRotate(written, args)
        case "rotate": try applyRotate(written, args)
        case "flip": try applyFlip(written, args)
        case "background": try applyBackground(written, args)
        case "blur", "sharpen": try applyBlurOrSharpen(name, written, args)
        case "pixelate": try applyPixelate(written, args)
        case "watermark": try applyWatermark(written, args)
        case "strip_metadata": try applyStripMetadata(written, args)
        case "keep_copyright": try applyKeepCopyright(written, args)
        case "quality": try applyQuality(written, args)
        case "format_quality": try applyFormatQuality(written, args)
        case "enforce_thumbnail": try applyEnforceThumbnail(written, args)
        case "strip_color_profile": try applyStripColorProfile(written, args)
        case "raw": try applyRaw(written, args)
        case "skip_processing": try applySkipProcessing(written, args)
        case "max_bytes": try applyMaxBytes(written, args)
        case "format": try applyFormat(written, args)
        case "page": try applyPage(written, args)
        case "video_thumbnail_second": try applyVideoThumbnailSecond(written, args)
        case "video_thumbnail_tile": try applyVideoThumbnailTile(written, args)
        case "cachebuster": try applyCacheBuster(written, args)
        case "expires": try applyExpires(written, args)
        case "filename": try applyFilename(written, args)
        case "return_attachment": try applyReturnAttachment(written, args)
        case "preset": try applyPresets(args)
        default:
            throw AspectError(.internalError, "imgproxy option \(name) has no reader")
        }
    }

    /// `trim:THRESHOLD:COLOUR:EQUAL_HOR:EQUAL_VER`, as imgproxy's `applyTrimOption` reads
    /// them; an empty threshold is no trim.
    private mutating func applyTrim(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...4)
        guard !args[0].isEmpty else {
            request.trim = nil
            return
        }
        var trim = Trim(threshold: try float(written, args[0]))
        if args.count > 1, !args[1].isEmpty { trim.color = try hexColor(written, args, args[1]) }
        if args.count > 2, !args[2].isEmpty { trim.equalHorizontal = try bool(written, args[2]) }
        if args.count > 3, !args[3].isEmpty { trim.equalVertical = try bool(written, args[3]) }
        request.trim = trim
    }

    /// `auto_rotate:BOOL`.
    private mutating func applyAutoRotate(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...1)
        request.autoRotate = try bool(written, args[0])
    }

    /// `background:RRGGBB` (or `RGB`), `background:R:G:B`, or an empty one for none.
    private mutating func applyBackground(_ written: String, _ args: [String]) throws(AspectError) {
        if args.count == 1, args[0].isEmpty {
            request.background = nil
        } else if args.count == 1 {
            request.background = try hexColor(written, args, args[0])
        } else {
            try count(written, args, 3...3)
            let rgb = try args.map { v throws(AspectError) in UInt8(try int(written, v, max: 255)) }
            request.background = Color(red: rgb[0], green: rgb[1], blue: rgb[2], alpha: 255)
        }
    }

    /// `blur:SIGMA` (up to 100) and `sharpen:SIGMA` (up to 10), `name` the full name; 0 is none.
    private mutating func applyBlurOrSharpen(_ name: String, _ written: String, _ args: [String])
        throws(AspectError)
    {
        try count(written, args, 1...1)
        let sigma = try float(written, args[0])
        let most = name == "blur" ? 100.0 : 10.0
        guard sigma <= most else {
            throw bad(written, args, "σ must be 0 (none) or up to \(decimalString(most))")
        }
        if name == "blur" {
            request.blur = sigma == 0 ? nil : sigma
        } else {
            request.sharpen = sigma == 0 ? nil : sigma
        }
    }

    /// `pixelate:SIZE`: a size of 0 or 1 is none.
    private mutating func applyPixelate(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...1)
        let n = try int(written, args[0], max: 256)
        request.pixelate = n <= 1 ? nil : n
    }

    /// `strip_metadata:BOOL`: only true, since Aspect always strips.
    private func applyStripMetadata(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...1)
        guard try bool(written, args[0]) else {
            throw bad(written, args, "is not supported: metadata is always stripped (but for output.keepCopyright)")
        }
    }

    /// `keep_copyright:BOOL`.
    private mutating func applyKeepCopyright(_ written: String, _ args: [String]) throws(AspectError) {
        // Per request; the server's own setting is the canonical nil.
        try count(written, args, 1...1)
        let keep = try bool(written, args[0])
        request.keepCopyright = keep == settings.keepCopyright ? nil : keep
    }

    /// `quality:N`: 0 is the server's.
    private mutating func applyQuality(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...1)
        let q = try int(written, args[0], max: 100)
        request.quality = q == 0 ? nil : q
    }

    /// `format_quality:FORMAT:N:FORMAT:N…`: 0 is the server's for that format.
    private mutating func applyFormatQuality(_ written: String, _ args: [String]) throws(AspectError) {
        guard args.count % 2 == 0 else { throw bad(written, args, "takes pairs of format and quality") }
        for i in stride(from: 0, to: args.count, by: 2) {
            guard let f = Self.format(args[i]) else {
                throw bad(written, args, "\(quoted(args[i])) is not a format")
            }
            let q = try int(written, args[i + 1], max: 100)
            request.formatQuality[f.rawValue] = q == 0 ? nil : q
        }
    }

    /// `enforce_thumbnail:BOOL`.
    private mutating func applyEnforceThumbnail(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...1)
        request.embeddedThumbnail = try bool(written, args[0])
    }

    /// `strip_color_profile:BOOL`.
    private mutating func applyStripColorProfile(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...1)
        request.keepProfile = try !bool(written, args[0])
    }

    /// `raw` or `raw:BOOL`.
    private mutating func applyRaw(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 0...1)
        request.raw = args.isEmpty ? true : try bool(written, args[0])
    }

    /// `skip_processing:FORMAT…`: added to the formats passed through as they are.
    private mutating func applySkipProcessing(_ written: String, _ args: [String]) throws(AspectError) {
        guard !args.isEmpty else { throw bad(written, args, "names the formats to pass through (skp:jpg:png)") }
        var formats = Set(request.passthrough)
        for a in args {
            let names = [
                "jpg": "jpeg", "jpeg": "jpeg", "png": "png", "gif": "gif", "webp": "webp", "avif": "avif",
                "heic": "heif", "heif": "heif", "tiff": "tiff", "tif": "tiff", "jxl": "jxl",
            ]
            guard let f = names[a.lowercased()] else {
                throw bad(
                    written, args,
                    "names no format Aspect passes through (jpg, png, gif, webp, avif, heic, tiff, jxl; an SVG is drawn)"
                )
            }
            formats.insert(f)
        }
        request.passthrough = formats.sorted()
    }

    /// `max_bytes:N`: 0 is none.
    private mutating func applyMaxBytes(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...1)
        let n = try int(written, args[0])
        guard n == 0 || n >= 1024 else { throw bad(written, args, "must be 0 (none) or at least 1024") }
        request.maxBytes = n == 0 ? nil : n
    }

    /// `format:FORMAT` (and the URL's `@extension`).
    private mutating func applyFormat(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...1)
        // best: imgproxy Pro's smallest-of-several, here the native format=best.
        guard let f = args[0] == "best" ? .best : Self.format(args[0]) else {
            throw bad(written, args, "must be jpg, jpeg, png, webp, avif, jxl, gif or best")
        }
        request.format = f
    }

    /// `page:N`, from 0; the request's page counts from 1.
    private mutating func applyPage(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...1)
        request.page = try int(written, args[0], max: ThumbRequest.maxPage - 1) + 1
    }

    /// `video_thumbnail_second:SECONDS`.
    private mutating func applyVideoThumbnailSecond(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...1)
        request.time = try float(written, args[0])
    }

    /// `video_thumbnail_tile:STEP:COLUMNS:ROWS:WIDTH:HEIGHT:EXTEND:TRIM:FILL:FOCUS_X:FOCUS_Y`
    /// (imgproxy Pro's sprite sheet): the native storyboard, `tiles=COLUMNSxROWS`, `every`
    /// the step (0 or below: the clip spread over the grid, as Pro's automatic step), each
    /// tile sized as `rs:fit:WIDTH:HEIGHT` would (`rs:fill` with FILL, `ex:1` with EXTEND,
    /// `g:fp` with the focus). TRIM (a sheet cut to the rows it fills) is not what Aspect's
    /// sheets do, each the whole grid so that every `#xywh` holds: 400.
    private mutating func applyVideoThumbnailTile(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 5...10)
        let step = try float(written, args[0], min: -Self.largestDecimal)
        request.tiles = try Grid.parse(
            "\(try int(written, args[1], min: 1))x\(try int(written, args[2], min: 1))", limits)
        request.every = step > 0 ? step : nil
        geometry.width = try int(written, args[3])
        geometry.height = try int(written, args[4])
        if args.count > 5, !args[5].isEmpty { geometry.extend = try bool(written, args[5]) }
        if args.count > 6, !args[6].isEmpty, try bool(written, args[6]) {
            throw bad(written, args, "trim is not supported: a sheet here keeps the whole grid, so every #xywh holds")
        }
        if args.count > 7, !args[7].isEmpty, try bool(written, args[7]) { geometry.resize = .fill }
        if args.count > 9 {
            geometry.gravity = try gravity(written, ["fp", args[8], args[9]])
        } else if args.count == 9 {
            throw bad(written, args, "takes FOCUS_X and FOCUS_Y together")
        }
    }

    /// `cachebuster:TEXT`: read and ignored.
    private func applyCacheBuster(_ written: String, _ args: [String]) throws(AspectError) {
        // It makes another URL; the result is keyed by the source's version already.
        try count(written, args, 1...1)
    }

    /// `expires:UNIXTIME`: a 410 once past (0 or less: never).
    private mutating func applyExpires(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...1)
        guard let t = Int64(args[0]) else { throw bad(written, args, "must be a Unix time") }
        if t > 0, t < now { throw AspectError(.gone, "the URL expired at \(t) (expires)") }
        expires = t
    }

    /// `filename:NAME:ENCODED`: percent-encoded, or base64url when `ENCODED`; empty is none.
    private mutating func applyFilename(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...2)
        if args.count > 1, !args[1].isEmpty, try bool(written, args[1]) {
            guard let text = ImgproxyURL.base64URLDecoded(args[0]) else {
                throw bad(written, args, "is not base64url of UTF-8 text")
            }
            filename = text
        } else {
            filename = (try? PercentEncoding.decode(Substring(args[0]))) ?? args[0]
        }
        if filename?.isEmpty == true { filename = nil }
    }

    /// `return_attachment:BOOL`.
    private mutating func applyReturnAttachment(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...1)
        attachment = try bool(written, args[0])
    }

    /// `preset:NAME:NAME…`: each a configured preset, expanded in order.
    private mutating func applyPresets(_ args: [String]) throws(AspectError) {
        for p in args {
            guard let text = settings.presets[p] else {
                let names = settings.presets.keys.sorted()
                throw AspectError(
                    .badParam,
                    "unknown imgproxy preset \(quoted(p)); "
                        + (names.isEmpty
                            ? "none are configured (imgproxy.presets)"
                            : "the configured ones are \(names.joined(separator: ", "))"))
            }
            try applyPreset(p, text)
        }
    }

    /// RRGGBB, or RGB with each digit doubled, as imgproxy's `RGBFromHex` reads.
    func hexColor(_ name: String, _ args: [String], _ v: String) throws(AspectError) -> Color {
        let hex = v.utf8.count == 3 ? v.map { "\($0)\($0)" }.joined() : v
        guard hex.utf8.count == 6, let c = Color(hex: hex) else {
            throw bad(name, args, "\(quoted(v)) is not a hex colour RRGGBB or RGB")
        }
        return c
    }

    /// imgproxy's names of the formats Aspect writes.
    static func format(_ name: String) -> FormatChoice? {
        switch name {
        case "jpg", "jpeg": .jpeg
        case "png": .png
        case "webp": .webp
        case "avif": .avif
        case "jxl": .jxl
        case "gif": .gif
        default: nil
        }
    }
}
