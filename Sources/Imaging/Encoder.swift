internal import CVips
import Core

/// Encoding to the output formats, always with every piece of metadata stripped.
enum Encoder {
    /// PNG's zlib level: 6 is libpng's own default, a fair balance of size and time.
    static let pngCompression: Int32 = 6

    /// What an animated output keeps of its source: the frames' height, delays, loops.
    struct Animation {
        var pageHeight: Int
        var delays: [Int32]
        var loop: Int32
    }

    /// The lowest quality `maxbytes` lowers to (SPEC).
    static let lowestQuality = 10

    /// A result and the quality it was encoded at, when the encoder chose it (`q=auto`,
    /// `maxbytes`); nil when it is the one asked or the format's default.
    struct Encoded {
        var bytes: [UInt8]
        var quality: Int?
        /// `format=best`'s choice, when it chose.
        var chosen: BestChoice?
    }

    /// `encode`; with `autoQuality`, at the quality its search chooses (SPEC: `q=auto`);
    /// and when the result is over `maxBytes` and the format has a quality, the highest
    /// quality from `lowestQuality` up to the asked (or chosen) one whose result fits, found
    /// by the floor and then bisection, in at most six more encodes; when none fits, the
    /// smallest result made (SPEC: `maxbytes`), or with `unmetKeepsFirst` the first one, at
    /// the asked quality (thumbor's `max_bytes`). PNG and GIF have no quality to lower.
    static func encode(
        _ image: VImage, format: ImageFormat, quality: Int?, animation: Animation? = nil, maxBytes: Int?,
        keepCopyright: Bool = false, autoQuality: AutoQuality? = nil, unmetKeepsFirst: Bool = false,
        profile: [UInt8]? = nil, best: BestCandidates? = nil, avifEffort: Int = Defaults.Output.avifEffort
    ) throws(ImagingError) -> Encoded {
        if format.isVideo {
            guard let animation else {
                throw ImagingError(.encode, AspectError(.internalError, "a \(format.rawValue) is made of frames"))
            }
            return Encoded(bytes: try video(image, format: format, animation: animation))
        }
        // Read before anything is stripped (SPEC: output.keepCopyright).
        let rights = keepCopyright ? Copyright.read(from: image) : nil
        func encode(_ image: VImage, format: ImageFormat, quality: Int?, animation: Animation?) throws(ImagingError)
            -> [UInt8]
        {
            try Encoder.encode(
                image, format: format, quality: quality, animation: animation, rights: rights, profile: profile,
                avifEffort: avifEffort)
        }
        var chosen: Encoded?
        // Decoded once: every encode below reads the same pixels, not the pipeline again.
        var held: VImage?
        func pixels() throws(ImagingError) -> VImage {
            if let held { return held }
            let copy = try image.then("copy") { cvips_copy_memory($0, $1) }
            held = copy
            return copy
        }
        if let best, let autoQuality, animation == nil {
            return try Self.best(try pixels(), best, autoQuality) { image, format, q, lossless throws(ImagingError) in
                try Encoder.encode(
                    image, format: format, quality: q, rights: rights, profile: profile, lossless: lossless,
                    avifEffort: avifEffort)
            }
        }
        if let autoQuality, animation == nil, AutoQuality.formats.contains(format) {
            // Every candidate is encoded as it would be served, so the chosen one is kept,
            // not encoded again (only Max, never measured, is encoded when chosen).
            let image = try pixels()
            let reference = try LumaSSIM(image)
            let found = try searchQuality(image, format: format, autoQuality, reference: reference) {
                q throws(ImagingError) in
                try encode(image, format: format, quality: q, animation: nil)
            }
            if let found {
                chosen =
                    found.bytes.isEmpty
                    ? Encoded(
                        bytes: try encode(image, format: format, quality: found.quality, animation: nil),
                        quality: found.quality)
                    : found
            } else {
                let fallback = format.defaultQuality ?? 80
                chosen = Encoded(
                    bytes: try encode(image, format: format, quality: fallback, animation: nil), quality: fallback)
            }
        }
        guard let maxBytes, let asked = chosen?.quality ?? quality ?? format.defaultQuality else {
            if let chosen { return chosen }
            return Encoded(bytes: try encode(image, format: format, quality: quality, animation: animation))
        }
        let pixels = try pixels()
        let first: [UInt8]
        if let chosen {
            first = chosen.bytes
        } else {
            first = try encode(pixels, format: format, quality: asked, animation: animation)
        }
        if first.count <= maxBytes { return Encoded(bytes: first, quality: chosen?.quality) }
        var smallest = first
        var fits: [UInt8]?
        func attempt(_ q: Int) throws(ImagingError) -> Bool {
            let bytes = try encode(pixels, format: format, quality: q, animation: animation)
            if bytes.count < smallest.count { smallest = bytes }
            guard bytes.count <= maxBytes else { return false }
            fits = bytes
            return true
        }
        var fitting = lowestQuality
        // The floor first: if even it does not fit, nothing will, and one encode says so.
        guard asked > lowestQuality, try attempt(lowestQuality) else {
            if unmetKeepsFirst { return Encoded(bytes: first, quality: asked) }
            return Encoded(bytes: smallest, quality: smallest == first ? asked : lowestQuality)
        }
        var (low, high) = (lowestQuality + 1, asked - 1)
        for _ in 0..<5 where low <= high {
            let q = (low + high + 1) / 2
            if try attempt(q) {
                fitting = q
                low = q + 1
            } else {
                high = q - 1
            }
        }
        return Encoded(bytes: fits ?? smallest, quality: fitting)
    }

    /// `q=auto`: `encode(q)` at the qualities the search asks for, each result decoded and
    /// its luma compared with `reference`'s (the unencoded image's) by SSIM, and handed to
    /// `seen` with whether it kept the picture (`format=best` stops a search there by
    /// throwing). Nil when a result this libvips cannot decode again (its loader not among
    /// `images.formats`) ends the search, with a warning in the log: the caller falls
    /// back to the format's default quality.
    static func searchQuality<E: Error>(
        _ image: VImage, format: ImageFormat, _ target: AutoQuality, reference: LumaSSIM,
        encode: (Int) throws(E) -> [UInt8], seen: (_ bytes: [UInt8], _ kept: Bool) throws(E) -> Void = { _, _ in }
    ) throws(E) -> Encoded? {
        var made: [Int: [UInt8]] = [:]
        var undecodable = false
        /// The SSIM of `q`'s result; 1 once a result cannot be decoded (the search then
        /// ends quickly, and its answer is set aside below).
        func measure(_ q: Int) throws(E) -> Double {
            if undecodable { return 1 }
            let bytes = try encode(q)
            made[q] = bytes
            guard let score = ssim(of: bytes, format: format, against: reference, size: image.size) else {
                undecodable = true
                return 1
            }
            try seen(bytes, score >= target.ssim)
            return score
        }
        let q = try target.search(along: AutoQuality.Axis(format), measure)
        if undecodable {
            _ = Vips.takeError()
            Vips.log(
                .warn, "q=auto",
                "a \(format.rawValue) result could not be decoded to measure it; the default quality is used")
            return nil
        }
        // Max, when nothing lower kept the picture, has not been encoded: empty bytes say so.
        return Encoded(bytes: made[q] ?? [], quality: q)
    }

    /// An encoded result's SSIM against `reference`, the unencoded image of `size`; nil
    /// when it cannot be decoded again or is another size. A WebP is decoded by libwebp
    /// itself (the pixels libvips' loader gives, in a third of the time); the rest by
    /// libvips, read once from top to bottom.
    static func ssim(of bytes: [UInt8], format: ImageFormat, against reference: LumaSSIM, size: Size) -> Double? {
        if format == .webp, let score = webpSSIM(bytes, reference, size: size) { return score }
        // libvips decodes from the bytes lazily: they must outlive the decode.
        return withExtendedLifetime(bytes) {
            let decoded = try? VImage.make(.decode, AspectError(.internalError, "")) { out in
                bytes.withUnsafeBytes { raw in cvips_load_buffer_sequential(raw.baseAddress, raw.count, out) }
            }
            guard let decoded, decoded.size == size, let srgb = try? Pipeline.toSRGB(decoded) else { return nil }
            return try? srgb.withPixels { reference.compare(pixels: $0, bands: srgb.bands) }
        }
    }

    /// A WebP result's SSIM against `reference`, decoded by libwebp; nil when libwebp
    /// cannot decode it or it is another size (libvips then tries).
    static func webpSSIM(_ bytes: [UInt8], _ reference: LumaSSIM, size: Size) -> Double? {
        var (width, height, bands): (Int32, Int32, Int32) = (0, 0, 0)
        let pixels = bytes.withUnsafeBytes { raw in
            cvips_webp_decode(raw.baseAddress, raw.count, &width, &height, &bands)
        }
        guard let pixels else { return nil }
        defer { cvips_webp_free(pixels) }
        guard Int(width) == size.width, Int(height) == size.height else { return nil }
        let count = Int(width) * Int(height) * Int(bands)
        return reference.compare(pixels: UnsafeRawBufferPointer(start: pixels, count: count), bands: Int(bands))
    }

    /// One encode with no metadata but `rights`, when given (where the format carries
    /// EXIF or XMP: JPEG, WebP, AVIF both; PNG the XMP; GIF and JPEG XL none in libvips 8.14).
    static func encode(
        _ image: VImage, format: ImageFormat, quality: Int?, animation: Animation? = nil, rights: Copyright? = nil,
        profile: [UInt8]? = nil, lossless: Bool = false, avifEffort: Int = Defaults.Output.avifEffort
    )
        throws(ImagingError) -> [UInt8]
    {
        let q = Int32(quality ?? format.defaultQuality ?? 80)
        if format == .avif, !avifAvailable {
            throw ImagingError(.encode, unavailable)
        }
        var image = try withoutMetadata(image)
        rights?.apply(to: image)
        // `profile=keep`: the source's profile, the only other field the image then carries.
        if let profile, format != .gif {
            let withProfile = image
            image = try withProfile.then("profile") { input, out in
                profile.withUnsafeBytes { cvips_set_icc_profile(input, out, $0.baseAddress, $0.count) }
            }
        }
        // Strip unless there are rights or a profile to keep: the image carries nothing else.
        let strip: Int32 = rights == nil && (profile == nil || format == .gif) ? 1 : 0
        if let animation {
            // On the stripped copy, which no one else holds: the savers read these.
            animation.delays.withUnsafeBufferPointer {
                cvips_set_animation(
                    image.pointer, Int32(animation.pageHeight), $0.baseAddress, Int32($0.count), animation.loop)
            }
        }
        let bytes = takeBuffer { buffer, length in
            switch format {
            case .jpeg: cvips_jpegsave(image.pointer, buffer, length, q, strip, Self.progressive(image.size), 1)
            case .png: cvips_pngsave(image.pointer, buffer, length, pngCompression, strip)
            case .webp:
                lossless
                    ? cvips_webpsave_lossless(image.pointer, buffer, length, strip)
                    : cvips_webpsave(image.pointer, buffer, length, q, strip)
            case .avif: cvips_avifsave(image.pointer, buffer, length, q, strip, Int32(min(max(avifEffort, 0), 9)))
            case .jxl: cvips_jxlsave(image.pointer, buffer, length, q, strip)
            case .gif: cvips_gifsave(image.pointer, buffer, length)
            case .tiff: cvips_tiffsave_deflate(image.pointer, buffer, length, strip)
            case .mp4, .webm: Int32(-1)
            }
        }
        guard let bytes else {
            throw ImagingError(
                .encode, AspectError(.internalError, "encoding the image failed"), detail: Vips.takeError())
        }
        return format == .webp && rights == nil && profile == nil ? WebPContainer.strippingMetadata(bytes) : bytes
    }

    /// A copy with every metadata field removed, as well as the savers' `strip`: what
    /// the image does not carry, no saver can write.
    static func withoutMetadata(_ image: VImage) throws(ImagingError) -> VImage {
        let copy = try image.then("strip") { cvips_copy($0, $1) }
        guard let fields = vips_image_get_fields(copy.pointer) else { return copy }
        defer { g_strfreev(fields) }
        var i = 0
        while let name = fields[i] {
            // The basic header (width, bands, …) is not metadata; removing it is a no-op.
            vips_image_remove(copy.pointer, name)
            i += 1
        }
        return copy
    }

    static let unavailable = AspectError(
        .badParam, "format=avif is not available: this server's libvips has no AV1 encoder; ask for webp, png or jpeg")

    /// Whether this libvips can write AVIF: tried once, on a tiny image.
    static let avifAvailable: Bool = {
        guard
            let tiny = try? VImage.fromPixels([UInt8](repeating: 128, count: 8 * 8 * 3), width: 8, height: 8, bands: 3)
        else { return false }
        let ok = takeBuffer { cvips_avifsave(tiny.pointer, $0, $1, 50, 1, 0) } != nil
        _ = Vips.takeError()
        return ok
    }()

    /// The largest JPEG written baseline, in pixels (400 × 400). A result this small is
    /// about 20 KB or less at the default quality, so it arrives in TCP's first flight
    /// or two, where a progressive file's first scan shows nothing sooner; and baseline
    /// with optimised Huffman tables costs about 0.6 of progressive's encode for bytes
    /// within 3% (a 300 × 225 fill: 0.96 ms against 1.58, BENCHMARKS.md, issue 53). Larger
    /// results stay progressive: their first scan shows the whole picture early.
    static let baselineMaxPixels = 160_000

    /// 1 when a JPEG of `size` is written progressive, else 0.
    static func progressive(_ size: Size) -> Int32 {
        size.pixels() > Int64(baselineMaxPixels) ? 1 : 0
    }
}
