import Core
import Foundation

/// An imgproxy URL, `/SIGNATURE/OPTIONS…/plain/SOURCE[@EXT]` or
/// `/SIGNATURE/OPTIONS…/BASE64URL_SOURCE[.EXT]`, parsed into Aspect's request (SPEC:
/// imgproxy URLs). The options are read as imgproxy's `options/parser` reads them: in
/// order, a later one overriding an earlier, presets expanded where they stand, the
/// `default` preset first.
public struct ImgproxyURL: Sendable {
    public var signature: String
    /// What the signature covers: everything after the signature segment, with its
    /// leading `/`, as sent (escapes kept).
    public var signedPath: String
    public var request: ThumbRequest
    /// `expires`: a Unix time after which the URL is a 410 (checked by `parse`).
    public var expires: Int64?
    /// `filename` and `return_attachment`: what `Content-Disposition` says.
    public var filename: String?
    public var attachment = false
    /// The presets applied, in order (`default` first when configured).
    public var usedPresets: [String] = []

    /// What the configuration gives the parser.
    public struct Settings: Sendable {
        public var root: SourceRoot
        /// `imgproxy.presets`: names to options in the dialect's syntax (`rs:fill:300:200/q:80`).
        public var presets: [String: String]
        /// `output.keepCopyright`: what `keep_copyright` must agree with.
        public var keepCopyright: Bool
        /// The watermark `watermark` shows: the first configured one, by name.
        public var watermark: String?

        public init(
            root: SourceRoot, presets: [String: String] = [:], keepCopyright: Bool = false, watermark: String? = nil
        ) {
            self.root = root
            self.presets = presets
            self.keepCopyright = keepCopyright
            self.watermark = watermark
        }
    }

    /// The options the dialect reads, by every name imgproxy gives them.
    static let names: [String: String] = {
        let groups: [[String]] = [
            ["resize", "rs"], ["size", "s"], ["resizing_type", "rt"], ["width", "w"], ["height", "h"],
            ["min-width", "mw"], ["min-height", "mh"], ["zoom", "z"], ["dpr"], ["enlarge", "el"], ["extend", "ex"],
            ["extend_aspect_ratio", "extend_ar", "exar"], ["gravity", "g"], ["crop", "c"], ["trim", "t"],
            ["padding", "pd"], ["auto_rotate", "ar"], ["rotate", "rot"], ["flip", "fl"], ["background", "bg"],
            ["blur", "bl"], ["sharpen", "sh"], ["pixelate", "pix"], ["watermark", "wm"], ["strip_metadata", "sm"],
            ["keep_copyright", "kcr"], ["quality", "q"], ["format_quality", "fq"], ["max_bytes", "mb"],
            ["format", "f", "ext"], ["page", "pg"], ["video_thumbnail_second", "vts"],
            ["video_thumbnail_tile", "vtt"], ["cachebuster", "cb"],
            ["expires", "exp"], ["filename", "fn"], ["return_attachment", "att"], ["preset", "pr"],
            ["raw"], ["skip_processing", "skp"], ["strip_color_profile", "scp"], ["enforce_thumbnail", "eth"],
        ]
        var m: [String: String] = [:]
        for g in groups { for n in g { m[n] = g[0] } }
        return m
    }()

    /// The signature segment and the path it signs (from the `/` after it), or a 404.
    /// `path` is the request target's path as sent, not percent-decoded: imgproxy signs
    /// the path as sent and decodes the source once.
    public static func split(_ path: String) throws(AspectError) -> (signature: String, signed: String) {
        let trimmed = path.drop { $0 == "/" }
        guard let slash = trimmed.firstIndex(of: "/"), slash != trimmed.startIndex,
            trimmed.index(after: slash) != trimmed.endIndex
        else {
            throw AspectError(
                .notFound, "no such route: \(quoted(path)); an imgproxy URL is /SIGNATURE/OPTIONS/plain/SOURCE")
        }
        return (String(trimmed[..<slash]), String(trimmed[slash...]))
    }

    /// imgproxy's `RedenormalizePath`: undoes what some proxies and CDNs do to a URL, `%3A`
    /// in the options made a colon again and a plain source's `scheme:/x` made `scheme://x`
    /// (`local:///x`). A signature is taken over the path as sent, or over this.
    public static func redenormalized(_ signed: String) -> String {
        let body = signed.drop { $0 == "/" }
        let options: Substring
        let plain: Substring?
        if body.hasPrefix("plain/") {
            (options, plain) = ("", body.dropFirst(6))
        } else if let r = body.range(of: "/plain/") {
            (options, plain) = (body[..<r.lowerBound], body[r.upperBound...])
        } else {
            (options, plain) = (body, nil)
        }
        let opts = options.replacingOccurrences(of: "%3A", with: ":").replacingOccurrences(of: "%3a", with: ":")
        guard var source = plain.map(String.init) else { return "/" + opts }
        if let colon = source.range(of: ":/"), let first = source.first, first.isLetter,
            source[..<colon.lowerBound].allSatisfy({ $0.isLetter || $0.isNumber || "+.-".contains($0) }),
            source[colon.upperBound...].first.map({ $0 != "/" }) == true
        {
            let scheme = source[..<colon.lowerBound]
            source = scheme + (scheme == "local" ? ":///" : "://") + source[colon.upperBound...]
        }
        return (opts.isEmpty ? "/plain/" : "/" + opts + "/plain/") + source
    }

    /// Parses the path of a request (no query, as sent: not percent-decoded) at Unix time
    /// `now`. The geometry is kept as imgproxy's: whether the native parameters say the
    /// same depends on the source, so `settle` decides it once the header is read.
    public static func parse(path: String, settings: Settings, limits: RequestLimits, now: Int64)
        throws(AspectError) -> ImgproxyURL
    {
        let (signature, signedPath) = try split(path)
        let parts = redenormalized(signedPath).dropFirst().split(separator: "/", omittingEmptySubsequences: false)
            .map(String.init)
        var reader = OptionReader(settings: settings, limits: limits, now: now)
        if let preset = settings.presets["default"] { try reader.applyPreset("default", preset) }
        var i = 0
        while i < parts.count {
            let part = parts[i]
            guard part.contains(":") else { break }
            let args = part.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            try reader.apply(args[0], Array(args.dropFirst()))
            i += 1
        }
        let (source, ext) = try decodeSource(Array(parts[i...]))
        if let ext { try reader.apply("format", [ext]) }
        var request = reader.request
        request.src = try settings.root.relativePath(of: source)
        try ThumbRequest.checkSourcePath(request.src)
        request.imgproxy = reader.geometry
        request.dpr = reader.geometry.dpr
        request.rotate = reader.geometry.rotate
        request.flip = reader.geometry.flip
        var url = ImgproxyURL(signature: signature, signedPath: signedPath, request: request)
        url.expires = reader.expires
        url.filename = reader.filename
        url.attachment = reader.attachment
        url.usedPresets = reader.usedPresets
        return url
    }

    /// The source and the extension after `@` (plain) or `.` (base64url).
    static func decodeSource(_ parts: [String]) throws(AspectError) -> (String, String?) {
        guard let first = parts.first, !first.isEmpty else {
            throw AspectError(.badParam, "the imgproxy URL names no source: end it with /plain/PATH or /BASE64URL")
        }
        if first == "plain", parts.count > 1 {
            let joined = parts.dropFirst().joined(separator: "/")
            let at = joined.split(separator: "@", omittingEmptySubsequences: false)
            guard at.count <= 2, !at[0].isEmpty else {
                throw AspectError(
                    .badParam, "the plain source \(quoted(joined)) is empty or names more than one format")
            }
            guard let path = try? PercentEncoding.decode(at[0]) else {
                throw AspectError(.badParam, "the plain source \(quoted(joined)) is not valid percent-encoding")
            }
            return (path, at.count == 2 && !at[1].isEmpty ? String(at[1]) : nil)
        }
        let joined = parts.joined()
        let dot = joined.split(separator: ".", omittingEmptySubsequences: false)
        guard dot.count <= 2, !dot[0].isEmpty else {
            throw AspectError(.badParam, "the base64 source \(quoted(joined)) is empty or names more than one format")
        }
        guard let path = base64URLDecoded(String(dot[0])) else {
            throw AspectError(.badParam, "the source \(quoted(String(dot[0]))) is not base64url of a UTF-8 path")
        }
        return (path, dot.count == 2 && !dot[1].isEmpty ? String(dot[1]) : nil)
    }

    /// RFC 4648's URL alphabet, padded or not, as UTF-8 text.
    static func base64URLDecoded(_ text: String) -> String? {
        var b64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.last == "=" { b64.removeLast() }
        b64 += String(repeating: "=", count: (4 - b64.count % 4) % 4)
        return Data(base64Encoded: b64).flatMap { String(data: $0, encoding: .utf8) }
    }
}
