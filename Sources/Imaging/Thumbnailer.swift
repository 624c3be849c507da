import CVips
import Core
import Foundation
import SVG
import Syscalls

/// The libvips pipeline: a source file and Core's plan in, encoded bytes out.
/// A value with no state but its limits: any number of threads may use one at once.
public struct Thumbnailer: Sendable {
    public private(set) var limits: ImagingLimits
    /// The configured watermarks' images, by name, read at start-up (`watermark(file:)`).
    public var watermarks: [String: WatermarkImage] = [:]

    public init(limits: ImagingLimits) throws(ImagingError) {
        try Vips.start()
        self.limits = limits
    }

    /// A finished thumbnail.
    public struct Rendered: Sendable {
        public var bytes: [UInt8]
        public var format: ImageFormat
        public var plan: Plan
        /// The quality the encoder chose (`q=auto`, `maxbytes`); nil when it was the one asked.
        public var quality: Int?
        /// `/info`'s facts from the render's own decode, when asked and it could say them.
        public var facts: SourceFacts?
    }

    /// Opens the file, then the whole job as `thumbnail(file:…)` does.
    public func thumbnail(path: String, request: ThumbRequest, requestLimits: RequestLimits, accept: String? = nil)
        throws(ImagingError) -> Rendered
    {
        try thumbnail(file: OpenFile.opening(path), request: request, requestLimits: requestLimits, accept: accept)
    }

    /// The page of `request` from a source, then the whole job as `render(file:page:order:)`.

    /// Probes, plans by Core's rules, resolves the format and renders: the whole job for
    /// one request, within `limits.processingTimeoutMs` from now (past it: a `timeout` error).
    public func thumbnail(file: OpenFile, request: ThumbRequest, requestLimits: RequestLimits, accept: String? = nil)
        throws(ImagingError) -> Rendered
    {
        try render(file: file, reading: request.reading) { source throws(AspectError) in
            try RenderOrder.plan(request, source: source, limits: requestLimits, accept: accept)
        }
    }

    /// Reads the header of the page `reading` names and checks the limits, asks `order`
    /// what to make of a source so described (the planner's answer; its error is the
    /// header stage's), and renders it: within `limits.processingTimeoutMs` from now, the
    /// header read included.
    public func render(
        file: OpenFile, reading: SourceReading = SourceReading(), wantFacts: Bool = false,
        order: (SourceDescription) throws(AspectError) -> RenderOrder
    )
        throws(ImagingError) -> Rendered
    {
        let deadline = Deadline.after(milliseconds: limits.processingTimeoutMs)
        var (input, source) = try open(file: file, reading: reading, deadline: deadline)
        if let trim = reading.trim { source = try trimmed(input, source, trim, deadline: deadline) }
        let wanted: RenderOrder
        do throws(AspectError) {
            wanted = try order(source.description)
        } catch {
            throw ImagingError(.header, error)
        }
        // imgproxy's keep_copyright, per request; else output.keepCopyright.
        var this = self
        if let keep = wanted.keepCopyright { this.limits.keepCopyright = keep }
        return try this.render(input, source, wanted, wantFacts: wantFacts, deadline: deadline)
    }

    /// What the header of the page `reading` names says, no pixel decoded, the limits checked.
    public func header(file: OpenFile, reading: SourceReading = SourceReading()) throws(ImagingError)
        -> SourceDescription
    {
        try open(file: file, reading: reading, deadline: .after(milliseconds: limits.processingTimeoutMs)).info
            .description
    }

    private func render(
        _ input: SourceInput, _ source: SourceInfo, _ wanted: RenderOrder, wantFacts: Bool, deadline: Deadline
    ) throws(ImagingError) -> Rendered {
        var source = source
        source.moment = wanted.moments.first
        var facts: SourceFacts?
        let encoded =
            wanted.animated && input.video != nil
            ? Encoder.Encoded(bytes: try renderVideoPreview(input, source: source, order: wanted, deadline: deadline))
            : wanted.animated
                ? Encoder.Encoded(
                    bytes: try renderAnimation(
                        input, source: source, plan: wanted.plan, format: wanted.format, quality: wanted.quality,
                        maxBytes: wanted.maxBytes, deadline: deadline))
                : try render(
                    input, source: source, plan: wanted.plan, format: wanted.format, quality: wanted.quality,
                    maxBytes: wanted.maxBytes, autoQuality: wanted.autoQuality, wantFacts: wantFacts, facts: &facts,
                    deadline: deadline)
        return Rendered(
            bytes: encoded.bytes, format: wanted.format, plan: wanted.plan, quality: encoded.quality, facts: facts)
    }

    /// Reads what the file's header says of `page` and checks the limits, decoding no pixels.
    public func probe(path: String, page: Int = 1) throws(ImagingError) -> SourceInfo {
        try open(file: OpenFile.opening(path), reading: SourceReading(page: page), deadline: .none).info
    }

    /// A video's header by FFmpeg: the upright frame size (its pixels held to
    /// `limits.maxSourcePixels` before any decode), the duration, codec and rate.
    func openVideo(_ file: OpenFile, container: String, bytes: Int64, deadline: Deadline)
        throws(ImagingError) -> (input: SourceInput, info: SourceInfo)
    {
        guard limits.formats.contains(container) else {
            throw ImagingError(
                .header,
                AspectError(
                    .unsupportedSource,
                    "the source is \(container) video, which this service does not decode; it decodes "
                        + limits.formats.sorted().joined(separator: ", ")))
        }
        let video = try VideoSource(file, deadline: deadline)
        let stored = video.storedSize
        try checkPixels(stored, "the video's frames are")
        var info = SourceInfo(
            size: video.uprightSize, storedSize: stored, orientation: 1, hasAlpha: false, format: container,
            bytes: bytes)
        info.video = video.videoFacts
        return (SourceInput(file, video: video), info)
    }

    /// The sanitised SVG that replaces the file's bytes for every loader (SPEC: Source
    /// formats); what was dropped goes to the log.
    func sanitisedSVG(_ file: OpenFile, bytes: Int64) throws(ImagingError) -> SourceInput {
        guard let raw = file.read(count: Int(bytes)) else {
            throw ImagingError(.open, AspectError(.unsupportedSource, "the source cannot be read"))
        }
        let clean: SanitisedSVG
        do throws(AspectError) {
            clean = try SVGSanitiser.sanitise(
                raw, maxElements: limits.maxSvgElements,
                rasterTypes: Set(limits.formats.compactMap { ImageFormat(rawValue: $0)?.mimeType }))
        } catch {
            throw ImagingError(error.code == .sourceTooLarge ? .limits : .header, error)
        }
        if !clean.dropped.isEmpty {
            let shown = clean.dropped.prefix(20).joined(separator: "; ")
            Vips.log(
                .warn, "svg",
                "sanitised an SVG: dropped \(clean.dropped.count) part(s): \(shown)\(clean.dropped.count > 20 ? "; …" : "")"
            )
        }
        return SourceInput(file, replacedBy: clean.bytes)
    }

    /// Sniffs the loader, refuses formats not served, sanitises an SVG, reads the header of
    /// `page` and checks the limits: what every stage after it reads, and what it says.
    func open(file: OpenFile, reading: SourceReading, deadline: Deadline) throws(ImagingError) -> (
        input: SourceInput, info: SourceInfo
    ) {
        let page = reading.page
        guard let bytes = file.regularFileSize else {
            throw ImagingError(.open, AspectError(.notFound, "no such source image"), detail: "not a regular file")
        }
        guard bytes <= limits.maxSourceBytes else {
            throw ImagingError(
                .limits,
                AspectError(
                    .sourceTooLarge, "the source is \(bytes) bytes, over limits.maxSourceBytes \(limits.maxSourceBytes)"
                ))
        }
        // A video is told by its container's first bytes and opened by FFmpeg.
        if let container = VideoSniff.container(file.read(count: Int(min(bytes, 64))) ?? []) {
            return try openVideo(file, container: container, bytes: bytes, deadline: deadline)
        }
        // One source for the sniff and the header (libvips rewinds it between them), unless
        // the bytes are replaced.
        let sniffed = try VSource(SourceInput(file), deadline: deadline)
        guard let loader = cvips_find_loader(sniffed.pointer) else {
            throw ImagingError(
                .header,
                AspectError(
                    .unsupportedSource,
                    "the source is not an image this service decodes; it decodes \(limits.formats.sorted().joined(separator: ", "))"
                ),
                detail: Vips.takeError())
        }
        let format = LoaderName.format(of: String(cString: loader))
        guard limits.formats.contains(format) else {
            throw ImagingError(
                .header,
                AspectError(
                    .unsupportedSource,
                    "the source is \(format), which this service does not decode; it decodes \(limits.formats.sorted().joined(separator: ", "))"
                ))
        }
        let input = format == "svg" ? try sanitisedSVG(file, bytes: bytes) : SourceInput(file)
        let unreadable = AspectError(
            .unsupportedSource, "the source's header cannot be read: it is corrupt or not an image")
        let first = input.memory == nil ? sniffed : try VSource(input, deadline: deadline)
        var header = try VImage.make(.header, unreadable) { cvips_open_header(first.pointer, 0, $0) }
        // GIF and WebP pages are an animation's frames; TIFF, HEIF and PDF pages are pages
        // (SPEC: Source formats), drawn one at a time: the one asked for.
        let count = max(1, Int(vips_image_get_n_pages(header.pointer)))
        let paged = LoaderName.pagedFormats.contains(format)
        let frames = paged ? 1 : count
        if paged, page > 1, page <= count {
            let source = try VSource(input, deadline: deadline)
            header = try VImage.make(.header, unreadable) { cvips_open_header(source.pointer, Int32(page - 1), $0) }
        }
        let stored = header.size
        guard frames <= limits.maxAnimationFrames else {
            throw ImagingError(
                .limits,
                AspectError(
                    .sourceTooLarge,
                    "the source has \(frames) frames, over limits.maxAnimationFrames \(limits.maxAnimationFrames)"))
        }
        // An animation's frames count together (SPEC: Animated sources). A vector is held
        // at the size it is drawn, when the plan is known.
        let pixels = Int64(stored.width) * Int64(stored.height) * Int64(frames)
        let vector = SourceDescription.vectorFormats.contains(format)
        guard pixels <= limits.maxSourcePixels || vector else {
            throw ImagingError(
                .limits,
                AspectError(
                    .sourceTooLarge,
                    "the source is \(stored)\(frames > 1 ? " × \(frames) frames" : "") = \(pixels) pixels, over "
                        + "limits.maxSourcePixels \(limits.maxSourcePixels)")
            )
        }
        let orientation = Int(vips_image_get_orientation(header.pointer))
        let swap = vips_image_get_orientation_swap(header.pointer) != 0
        // A PDF page is drawn on white paper: opaque, whatever bands the loader gives.
        var info = SourceInfo(
            size: swap ? Size(width: stored.height, height: stored.width) : stored, storedSize: stored,
            orientation: (1...8).contains(orientation) ? orientation : 1,
            hasAlpha: header.hasAlpha && format != "pdf", format: format, bytes: bytes,
            profile: ICCProfile.kind(header.iccProfile), frames: frames, pages: paged ? count : 1,
            page: paged && page <= count ? page : 1)
        info.hdr = HDRCoding.of(file, format: format, page: info.page)
        if !reading.autoRotate {
            // imgproxy's auto_rotate:0: the pixels as stored.
            info.size = stored
            info.orientation = 1
            info.noRotate = true
        }
        return (input, info)
    }

    /// The side `describe` decodes to, at most: what ThumbHash takes.
    public static let previewSide = 100

    /// What `/info` needs: the header (limits checked as for a render), and a decode by
    /// shrink-on-load to fit `previewSide` × `previewSide`, upright, in sRGB, as RGBA.
    public func describe(file: OpenFile, reading: SourceReading = SourceReading()) throws(ImagingError)
        -> SourceFacts
    {
        let deadline = Deadline.after(milliseconds: limits.processingTimeoutMs)
        var (input, info) = try open(file: file, reading: reading, deadline: deadline)
        if let trim = reading.trim { info = try trimmed(input, info, trim, deadline: deadline) }
        do throws(AspectError) { try info.description.check(page: reading.page) } catch {
            throw ImagingError(.header, error)
        }
        // A video's placeholders are its default frame's (SPEC: Video).
        if let video = info.video {
            info.moment = RenderOrder.defaultMoment(
                duration: video.duration, limits: RequestLimits(videoDefaultSeconds: limits.videoDefaultSeconds))
        }
        let small = Self.previewSize(info.size)
        let image = try decodeResized(input, info, to: small, fastShrink: true, deadline: deadline)
        return try facts(info, preview: image)
    }

    /// The preview's size: the source's, shrunk to fit `previewSide` × `previewSide`.
    static func previewSize(_ size: Size) -> Size {
        let scale = min(1, Double(previewSide) / Double(max(size.width, size.height)))
        return Size(
            width: max(1, Int((Double(size.width) * scale).rounded())),
            height: max(1, Int((Double(size.height) * scale).rounded())))
    }

    /// `/info`'s facts, from a decode of the whole upright source at the preview's size.
    func facts(_ info: SourceInfo, preview decoded: VImage) throws(ImagingError) -> SourceFacts {
        let small = Self.previewSize(info.size)
        var image = try Pipeline.toSRGB(try Pipeline.exactSize(decoded, small))
        if !image.hasAlpha { image = try image.then("alpha") { cvips_bandjoin_const1($0, $1, 255) } }
        let rgba = try image.pixels()
        guard rgba.count == small.width * small.height * 4 else {
            throw ImagingError(
                .process, AspectError(.internalError, "describing the image failed"),
                detail: "preview has \(rgba.count) bytes for \(small)")
        }
        return SourceFacts(
            description: info.description, orientation: info.orientation, frames: info.frames, pages: info.pages,
            video: info.video, previewWidth: small.width, previewHeight: small.height, previewRGBA: rgba)
    }

    /// `/info`'s facts from a render's own decode (SPEC: Efficiency), when that decode is
    /// of the whole upright still source: the decoded image shrunk to the preview's size.
    /// Nil for a region, a turn, a trim, an animation or a video, whose decode is not that.
    func factsFromRender(_ resized: VImage, _ info: SourceInfo, _ plan: Plan) -> SourceFacts? {
        let small = Self.previewSize(info.size)
        // A decode smaller than the preview would have to be enlarged: describe's is better.
        guard !plan.reshapesSource, info.trim == nil, info.video == nil, info.frames == 1,
            resized.width >= small.width, resized.height >= small.height
        else { return nil }
        guard
            let preview = try? resized.then(
                "preview", { cvips_thumbnail_image_force($0, $1, Int32(small.width), Int32(small.height)) }),
            let facts = try? facts(info, preview: preview)
        else {
            _ = Vips.takeError()
            return nil
        }
        return facts
    }

    /// Renders a plan: resize with shrink-on-load (for JPEG by `ShrinkOnLoad.fast` when
    /// `limits.fastShrinkOnLoad`, else libvips' choice), autorotate, embedded profiles
    /// converted to sRGB (CMYK too), then crop or
    /// place, clip to the shape, flatten where the format has no alpha, and encode with
    /// no metadata.
    func render(
        _ input: SourceInput, source info: SourceInfo, plan: Plan, format: ImageFormat, quality: Int?, maxBytes: Int?,
        autoQuality: AutoQuality? = nil, wantFacts: Bool = false, facts: inout SourceFacts?, deadline: Deadline
    )
        throws(ImagingError) -> Encoder.Encoded
    {
        let pixels = Int64(plan.resized.width) * Int64(plan.resized.height)
        // A vector's pixels are the ones it is drawn at (SPEC: Source formats): its limit.
        if info.description.isVector { try checkDrawn(plan.resized, info) }
        guard pixels <= limits.maxSourcePixels else {
            throw ImagingError(
                .limits,
                AspectError(
                    .badParam,
                    "this request scales the source to \(plan.resized) pixels before cropping, over "
                        + "limits.maxSourcePixels \(limits.maxSourcePixels); ask with upscale=0 or a box closer to the source's shape"
                ))
        }
        let resized =
            plan.reshapesSource
            ? try decodeRegion(input, info, plan, deadline: deadline)
            : try decodeResized(input, info, to: plan.resized, fastShrink: limits.fastShrinkOnLoad, deadline: deadline)
        try deadline.check()
        var image = try Pipeline.exactSize(resized, plan.resized)
        if wantFacts { facts = factsFromRender(image, info, plan) }
        image = try Pipeline.toSRGB(image)
        image = try Pipeline.cropOrPlace(image, plan, format: format)
        image = try Pipeline.finish(image, plan, format: format, watermarks: watermarks)
        try deadline.check()
        if !format.hasAlpha, image.hasAlpha {
            let bg = plan.background ?? .white
            image = try image.then("flatten") {
                cvips_flatten($0, $1, [Double(bg.red), Double(bg.green), Double(bg.blue)], 3)
            }
        }
        return try Encoder.encode(
            image, format: format, quality: quality, maxBytes: maxBytes, keepCopyright: limits.keepCopyright,
            autoQuality: autoQuality)
    }
}

extension Thumbnailer {
    /// An animated source to an animated WebP or GIF: libvips resizes every frame (loaded
    /// with n=-1) to the planned size in one pass; then each frame goes through the same
    /// steps as a still (crop or place, effects, shape), and the frames are joined again
    /// with the source's delays and loop count.
    func renderAnimation(
        _ input: SourceInput, source info: SourceInfo, plan: Plan, format: ImageFormat, quality: Int?, maxBytes: Int?,
        deadline: Deadline
    ) throws(ImagingError) -> [UInt8] {
        let frames = info.frames
        let (cut, decoded) = try framesDecoded(plan, count: frames)
        let source = try VSource(input, deadline: deadline)
        let (w, h) = (Int32(decoded.width), Int32(decoded.height))
        let toSRGB: Int32 = info.profile == .other ? 1 : 0
        let failOn = Int32(VIPS_FAIL_ON_ERROR.rawValue)
        let corrupt = AspectError(
            .unsupportedSource, "the animation cannot be decoded: a frame is corrupt or truncated")
        let strip: VImage
        do throws(ImagingError) {
            let lazy = try VImage.make(.decode, corrupt) {
                cvips_thumbnail_animated(source.pointer, $0, w, h, failOn, toSRGB)
            }
            // Not copied to memory: the encoder pulls the frames through the steps below as
            // it writes them (about 130 ms less for 50 frames than decoding them all first).
            strip = lazy
        } catch {
            if source.expired || deadline.passed { throw deadline.error }
            throw error
        }
        var pageHeight: Int32 = 0
        var delayPointer: UnsafePointer<Int32>?
        var delayCount: Int32 = 0
        var loop: Int32 = 0
        cvips_get_animation(strip.pointer, &pageHeight, &delayPointer, &delayCount, &loop)
        let delays = delayPointer.map { Array(UnsafeBufferPointer(start: $0, count: Int(delayCount))) } ?? []
        guard strip.size.width == decoded.width, Int(pageHeight) == decoded.height,
            strip.size.height == decoded.height * frames
        else {
            throw ImagingError(
                .process, AspectError(.internalError, "processing the animation failed (resize)"),
                detail: "thumbnail gave \(strip.size) in pages of \(pageHeight), planned \(frames) × \(decoded)")
        }
        do throws(ImagingError) {
            return try animate(
                count: frames, cut: cut, plan: plan, format: format, quality: quality, maxBytes: maxBytes,
                delays: delays, loop: loop,
                deadline: deadline
            ) { i throws(ImagingError) in
                try strip.then("extract_area") { cvips_extract_area($0, $1, 0, Int32(i) * h, w, h) }
            }
        } catch {
            if error.stage != .encode { throw error }
            // The frames are decoded as the encoder reads them, so a failure here is the
            // source's (a corrupt frame) or the deadline's, not the encoder's.
            if source.expired || deadline.passed { throw deadline.error }
            throw ImagingError(.decode, corrupt, detail: error.detail)
        }
    }

    /// `trim` (SPEC: Before the geometry): the upright source decoded whole, and the border
    /// whose pixels lie within the threshold of the background (the trim's colour, else the
    /// top-left pixel's) in every channel found by libvips (`find_trim`, which smooths away
    /// single-pixel noise first; transparency flattened onto magenta first, as imgproxy
    /// does); with `equalHorizontal`/`equalVertical` the smaller of two opposite cuts is
    /// made on both sides. The source's size becomes what is left. A source that is all
    /// border is left whole. For stills: an animation's or a video's frames would each
    /// trim differently.
    func trimmed(_ input: SourceInput, _ info: SourceInfo, _ trim: Trim, deadline: Deadline)
        throws(ImagingError) -> SourceInfo
    {
        guard info.frames == 1, info.video == nil else {
            throw ImagingError(
                .header, AspectError(.badParam, "trim applies to still images; this source is animated or a video"))
        }
        try checkPixels(info.size, "trimming decodes the whole source:")
        let whole = try Pipeline.toSRGB(
            try decodeResized(input, info, to: info.size, fastShrink: false, deadline: deadline))
        var (left, top, width, height): (Int32, Int32, Int32, Int32) = (0, 0, 0, 0)
        let color = trim.color.map { [Double($0.red), Double($0.green), Double($0.blue)] } ?? []
        let found = color.withUnsafeBufferPointer {
            cvips_find_trim(
                whole.pointer, trim.threshold, color.isEmpty ? nil : $0.baseAddress, &left, &top, &width, &height)
        }
        guard found == 0 else {
            throw ImagingError(
                .process, AspectError(.internalError, "finding the border failed"), detail: Vips.takeError())
        }
        var out = info
        guard width > 0, height > 0 else { return out }
        // imgproxy's equal_hor / equal_ver: the smaller cut of the two on both sides.
        if trim.equalHorizontal {
            let right = Int32(info.size.width) - left - width
            if right > left { width += right - left } else { (left, width) = (right, width + left - right) }
        }
        if trim.equalVertical {
            let bottom = Int32(info.size.height) - top - height
            if bottom > top { height += bottom - top } else { (top, height) = (bottom, height + top - bottom) }
        }
        guard Int(width) < info.size.width || Int(height) < info.size.height else { return out }
        out.trim = Rect(x: Int(left), y: Int(top), width: Int(width), height: Int(height))
        out.untrimmed = info.size
        out.size = Size(width: Int(width), height: Int(height))
        return out
    }

    /// The size an animation's frames are decoded at: the plan's, or, with a region or a
    /// turn, the whole source's at the region's scale (each frame is then reshaped as a
    /// still is). All `count` frames together are held to `limits.maxSourcePixels` (400).
    func framesDecoded(_ plan: Plan, count: Int) throws(ImagingError) -> (cut: RegionCut?, size: Size) {
        let cut = plan.reshapesSource ? Self.regionCut(plan) : nil
        let decoded = cut?.whole ?? plan.resized
        if let cut { try checkWhole(cut.whole, frames: count) }
        let pixels = Int64(decoded.width) * Int64(decoded.height) * Int64(count)
        guard pixels <= limits.maxSourcePixels else {
            throw ImagingError(
                .limits,
                AspectError(
                    .badParam,
                    "this request decodes \(count) frames at \(decoded) each, over limits.maxSourcePixels "
                        + "\(limits.maxSourcePixels); ask for a smaller size or fewer frames (frames=1: one)"))
        }
        return (cut, decoded)
    }

    /// The frames `frame(i)` gives (each at the decoded size: the plan's, or the whole
    /// source's for a region or a turn) through the same steps as a still, joined again,
    /// and encoded as an animation with `delays` and `loop`.
    func animate(
        count: Int, cut: RegionCut?, plan: Plan, format: ImageFormat, quality: Int?, maxBytes: Int?, delays: [Int32],
        loop: Int32,
        deadline: Deadline, frame: (Int) throws(ImagingError) -> VImage
    ) throws(ImagingError) -> [UInt8] {
        var done: [VImage] = []
        for i in 0..<count {
            try deadline.check()
            var image = try frame(i)
            if let cut { image = try Pipeline.exactSize(try Self.reshape(image, cut, plan), plan.resized) }
            image = try Pipeline.toSRGB(image)
            image = try Pipeline.cropOrPlace(image, plan, format: format)
            image = try Pipeline.finish(image, plan, format: format, watermarks: watermarks)
            done.append(image)
        }
        // The frames stay referenced by `done` while the join reads them.
        var pointers: [UnsafeMutablePointer<VipsImage>?] = done.map { $0.pointer }
        let joined = try VImage.make(.process, AspectError(.internalError, "processing the animation failed (join)")) {
            out in cvips_arrayjoin_vertical(&pointers, Int32(pointers.count), out)
        }
        let bytes = try Encoder.encode(
            joined, format: format, quality: quality,
            animation: Encoder.Animation(pageHeight: plan.output.height, delays: delays, loop: loop),
            maxBytes: maxBytes, keepCopyright: limits.keepCopyright
        ).bytes
        withExtendedLifetime(done) {}
        return bytes
    }

    /// A video's hover preview (SPEC: Video): one frame decoded at each of the order's
    /// moments, by seeking, never by decoding the whole clip; each resized and taken
    /// through the still's steps; shown `frameDelayMs` each, looping forever.
    func renderVideoPreview(_ input: SourceInput, source info: SourceInfo, order: RenderOrder, deadline: Deadline)
        throws(ImagingError) -> [UInt8]
    {
        guard let video = input.video else {
            throw ImagingError(.process, AspectError(.internalError, "processing the video failed"))
        }
        let plan = order.plan
        let count = order.moments.count
        let (cut, decoded) = try framesDecoded(plan, count: count)
        let delays = [Int32](repeating: Int32(order.frameDelayMs), count: count)
        return try animate(
            count: count, cut: cut, plan: plan, format: order.format, quality: order.quality,
            maxBytes: order.maxBytes, delays: delays, loop: 0,
            deadline: deadline
        ) { i throws(ImagingError) in
            try videoFrame(video, at: order.moments[i], to: decoded, deadline: deadline)
        }
    }

    /// The frame of a video at `seconds`, upright, resized to exactly `size`, in memory.
    func videoFrame(_ video: VideoSource, at seconds: Double, to size: Size, deadline: Deadline)
        throws(ImagingError) -> VImage
    {
        let frame = try video.frame(at: seconds, maxDecodeSeconds: limits.maxVideoSeconds, deadline: deadline)
        let resized = try frame.then("thumbnail") {
            cvips_thumbnail_image_force($0, $1, Int32(size.width), Int32(size.height))
        }
        return try resized.then("copy") { cvips_copy_memory($0, $1) }
    }

    /// How the region of a plan is cut from the whole source, resized: the size the whole
    /// upright source is resized to, and the window of it that is the region, at the size
    /// that becomes `plan.resized` once turned.
    struct RegionCut {
        var whole: Size
        var window: Rect
    }

    static func regionCut(_ plan: Plan) -> RegionCut {
        let region = plan.region ?? Rect(x: 0, y: 0, width: plan.upright.width, height: plan.upright.height)
        let quarter = plan.rotate == 90 || plan.rotate == 270
        let cut = quarter ? Size(width: plan.resized.height, height: plan.resized.width) : plan.resized
        let sx = Double(cut.width) / Double(region.width)
        let sy = Double(cut.height) / Double(region.height)
        let whole = Size(
            width: max(cut.width, Int((Double(plan.upright.width) * sx).rounded())),
            height: max(cut.height, Int((Double(plan.upright.height) * sy).rounded())))
        let left = min(Int((Double(region.x) * sx).rounded()), whole.width - cut.width)
        let top = min(Int((Double(region.y) * sy).rounded()), whole.height - cut.height)
        return RegionCut(whole: whole, window: Rect(x: left, y: top, width: cut.width, height: cut.height))
    }

    /// The region cut from an image of the whole source resized, then turned and mirrored.
    static func reshape(_ resizedWhole: VImage, _ cut: RegionCut, _ plan: Plan) throws(ImagingError) -> VImage {
        var image = resizedWhole
        if plan.region != nil {
            let w = cut.window
            image = try image.then("extract_area") {
                cvips_extract_area($0, $1, Int32(w.x), Int32(w.y), Int32(w.width), Int32(w.height))
            }
        }
        if plan.rotate != 0 {
            let angle =
                plan.rotate == 90 ? VIPS_ANGLE_D90 : plan.rotate == 180 ? VIPS_ANGLE_D180 : VIPS_ANGLE_D270
            image = try image.then("rot") { cvips_rot($0, $1, angle) }
        }
        if let flip = plan.flip {
            if flip != .v { image = try image.then("flip") { cvips_flip($0, $1, VIPS_DIRECTION_HORIZONTAL) } }
            if flip != .h { image = try image.then("flip") { cvips_flip($0, $1, VIPS_DIRECTION_VERTICAL) } }
        }
        return image
    }

    /// An SVG or a PDF page drawn at `size`: over `limits.maxSourcePixels` is a 413, as a
    /// raster source of that many pixels would be.
    func checkDrawn(_ size: Size, _ info: SourceInfo) throws(ImagingError) {
        try checkPixels(size, "drawing this \(info.format) at")
    }

    /// A 413 when `size` is over `limits.maxSourcePixels`; `what` begins the message.
    func checkPixels(_ size: Size, _ what: String) throws(ImagingError) {
        let pixels = Int64(size.width) * Int64(size.height)
        guard pixels <= limits.maxSourcePixels else {
            throw ImagingError(
                .limits,
                AspectError(
                    .sourceTooLarge,
                    "\(what) \(size) = \(pixels) pixels, over limits.maxSourcePixels \(limits.maxSourcePixels)"))
        }
    }

    func checkWhole(_ whole: Size, frames: Int) throws(ImagingError) {
        guard Int64(whole.width) * Int64(whole.height) * Int64(frames) <= limits.maxSourcePixels else {
            throw ImagingError(
                .limits,
                AspectError(
                    .badParam,
                    "this crop scales the whole source to \(whole) pixels\(frames > 1 ? " a frame" : "") before "
                        + "cutting the region out, over limits.maxSourcePixels \(limits.maxSourcePixels); ask for a "
                        + "larger region or a smaller size"))
        }
    }

    /// Before the geometry: the whole upright source resized so that the plan's region
    /// comes out at the planned size (turned back for a quarter turn), that region cut
    /// out, then rotated and flipped: `plan.resized`, as the plan says.
    func decodeRegion(_ input: SourceInput, _ info: SourceInfo, _ plan: Plan, deadline: Deadline)
        throws(ImagingError) -> VImage
    {
        let cut = Self.regionCut(plan)
        if info.description.isVector { try checkDrawn(cut.whole, info) }
        try checkWhole(cut.whole, frames: 1)
        let image = try decodeResized(
            input, info, to: cut.whole, fastShrink: limits.fastShrinkOnLoad, deadline: deadline)
        return try Self.reshape(try Pipeline.exactSize(image, cut.whole), cut, plan)
    }

    /// Decodes the source resized to exactly `size`, with shrink-on-load (for JPEG by
    /// `ShrinkOnLoad.fast` when `fastShrink`, else libvips' choice), autorotated, an
    /// embedded profile other than sRGB's converted to sRGB (after the resize, on the
    /// small image), into memory: every decode error, a truncated file included, is then
    /// this stage's, and later steps may read the pixels in any order (smartcrop does).
    /// The decode reads the file as it goes: past the deadline a read fails, and the
    /// failure is the timeout's, not the file's.
    func decodeResized(_ input: SourceInput, _ info: SourceInfo, to size: Size, fastShrink: Bool, deadline: Deadline)
        throws(ImagingError) -> VImage
    {
        if let t = info.trim, let untrimmed = info.untrimmed {
            // The whole upright source at the scale that makes the kept window `size`, and
            // that window cut out of it.
            var whole = info
            whole.trim = nil
            whole.size = untrimmed
            let (sx, sy) = (Double(size.width) / Double(t.width), Double(size.height) / Double(t.height))
            let all = Size(
                width: max(size.width, Int((Double(whole.size.width) * sx).rounded())),
                height: max(size.height, Int((Double(whole.size.height) * sy).rounded())))
            try checkWhole(all, frames: 1)
            let image = try decodeResized(input, whole, to: all, fastShrink: fastShrink, deadline: deadline)
            let x = min(Int((Double(t.x) * sx).rounded()), all.width - size.width)
            let y = min(Int((Double(t.y) * sy).rounded()), all.height - size.height)
            return try image.then("trim") {
                cvips_extract_area($0, $1, Int32(x), Int32(y), Int32(size.width), Int32(size.height))
            }
        }
        if let video = input.video {
            return try videoFrame(video, at: info.moment ?? 0, to: size, deadline: deadline)
        }
        let source = try VSource(input, deadline: deadline)
        func decoding(_ body: (UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> Int32) throws(ImagingError)
            -> VImage
        {
            do throws(ImagingError) {
                return try VImage.make(
                    .decode,
                    AspectError(.unsupportedSource, "the source cannot be decoded: it is corrupt or truncated"),
                    body)
            } catch {
                if source.expired || deadline.passed { throw deadline.error }
                throw error
            }
        }
        let (width, height) = (Int32(size.width), Int32(size.height))
        let failOn = Int32(VIPS_FAIL_ON_ERROR.rawValue)
        let shrink = info.format == "jpeg" && fastShrink ? ShrinkOnLoad.fast(from: info.size, to: size) : 1
        let toSRGB: Int32 = info.profile == .other ? 1 : 0
        let noRotate: Int32 = info.noRotate ? 1 : 0
        var lazy = try decoding {
            shrink > 1
                ? cvips_thumbnail_jpeg_force(
                    source.pointer, $0, width, height, Int32(shrink), failOn, toSRGB, noRotate)
                : cvips_thumbnail_force(
                    source.pointer, $0, width, height, Int32(info.page - 1), failOn, toSRGB, noRotate)
        }
        if info.format == "pdf", lazy.hasAlpha {
            lazy = try lazy.then("flatten") { cvips_flatten($0, $1, [255, 255, 255], 3) }
        }
        let decoded = try decoding { cvips_copy_memory(lazy.pointer, $0) }
        // PQ or HLG: to SDR on the resized pixels (SPEC: Colour and metadata).
        guard let hdr = info.hdr else { return decoded }
        return try ToneMap.toSDR(decoded, hdr)
    }
}

/// JPEG shrink-on-load: libjpeg decodes at 1/2, 1/4 or 1/8 of the size in its inverse
/// DCT, far cheaper than decoding whole and resizing.
public enum ShrinkOnLoad {
    /// The largest of 8, 4 and 2 that the smaller of the two scales allows, else 1: the
    /// rule of sharp's `fastShrinkOnLoad` and of imgproxy. libvips' own thumbnail leaves
    /// at least a factor of two for the resize after it, so it loads twice as large.
    /// Sizes are as displayed, both of them (the ratios are the same stored).
    public static func fast(from source: Size, to target: Size) -> Int {
        guard target.width > 0, target.height > 0 else { return 1 }
        let scale = min(
            Double(source.width) / Double(target.width), Double(source.height) / Double(target.height))
        return [8, 4, 2].first { scale >= Double($0) } ?? 1
    }
}
