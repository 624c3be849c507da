internal import CVips
import Core
import Foundation
import SVG
import Syscalls

// Opening a source: the sniff, the formats served, the SVG sanitiser, the header and
// the limits, before a pixel is decoded.
extension Thumbnailer {
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
        let format = try loaderFormat(sniffed)
        let input = format == "svg" ? try sanitisedSVG(file, bytes: bytes) : SourceInput(file)
        let read = try readHeader(input, sniffed: sniffed, format: format, reading: reading, deadline: deadline)
        try checkPixels(read.header.size, frames: read.frames, format: format)
        var info = Self.info(read, format: format, bytes: bytes, asked: reading.page)
        info.hdr = HDRCoding.of(file, format: format, page: info.page)
        let header = read.header
        if reading.keepProfile, info.profile == .other, header.bands >= 3,
            vips_image_get_interpretation(header.pointer) == VIPS_INTERPRETATION_sRGB
                || vips_image_get_interpretation(header.pointer) == VIPS_INTERPRETATION_RGB16
        {
            info.keptProfile = header.iccProfile
        }
        if !reading.autoRotate {
            // `autoRotate` off (a dialect's option): the pixels as stored.
            info.size = header.size
            info.orientation = 1
            info.noRotate = true
        }
        return (input, info)
    }

    /// The format of the loader libvips would pick for `sniffed`: a 415 when there is
    /// none, or when it is not one `images.formats` serves.
    func loaderFormat(_ sniffed: VSource) throws(ImagingError) -> String {
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
        return format
    }

    /// A header as read: of the page asked (or of an embedded thumbnail in its place), the
    /// count of pages or frames, and whether they are pages.
    struct HeaderRead {
        var header: VImage
        var count: Int
        var paged: Bool
        var frames: Int
        var embedded: Bool
    }

    /// The header of the page `reading` asks (GIF and WebP pages are an animation's frames;
    /// TIFF, HEIF and PDF pages are pages, drawn one at a time: SPEC, Source formats), or,
    /// with `thumbnail=embedded`, a HEIF/AVIF's embedded thumbnail when it has one (the
    /// geometry is then planned on it).
    func readHeader(
        _ input: SourceInput, sniffed: VSource, format: String, reading: SourceReading, deadline: Deadline
    ) throws(ImagingError) -> HeaderRead {
        let page = reading.page
        let unreadable = AspectError(
            .unsupportedSource, "the source's header cannot be read: it is corrupt or not an image")
        let first = input.memory == nil ? sniffed : try VSource(input, deadline: deadline)
        var header = try VImage.make(.header, unreadable) { cvips_open_header(first.pointer, 0, 0, $0) }
        let count = max(1, Int(vips_image_get_n_pages(header.pointer)))
        let paged = LoaderName.pagedFormats.contains(format)
        if paged, page > 1, page <= count {
            let source = try VSource(input, deadline: deadline)
            header = try VImage.make(.header, unreadable) { cvips_open_header(source.pointer, Int32(page - 1), 0, $0) }
        }
        var embedded = false
        if reading.embeddedThumbnail, format == "heif" {
            let source = try VSource(input, deadline: deadline)
            let p = Int32(paged && page <= count ? page - 1 : 0)
            if let thumb = try? VImage.make(.header, unreadable, { cvips_open_header(source.pointer, p, 1, $0) }),
                thumb.size != header.size
            {
                (header, embedded) = (thumb, true)
            }
            _ = Vips.takeError()
        }
        return HeaderRead(header: header, count: count, paged: paged, frames: paged ? 1 : count, embedded: embedded)
    }

    /// The frames and the pixels against the limits, before any is decoded. An
    /// animation's frames count together (SPEC: Animated sources); a vector is held at the
    /// size it is drawn, once the plan is known.
    func checkPixels(_ stored: Size, frames: Int, format: String) throws(ImagingError) {
        guard frames <= limits.maxAnimationFrames else {
            throw ImagingError(
                .limits,
                AspectError(
                    .sourceTooLarge,
                    "the source has \(frames) frames, over limits.maxAnimationFrames \(limits.maxAnimationFrames)"))
        }
        let pixels = stored.pixels(frames: frames)
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
    }

    /// What a header says of the source: its upright size, orientation, alpha, profile,
    /// frames and pages. A PDF page is drawn on white paper: opaque, whatever bands the
    /// loader gives.
    static func info(_ read: HeaderRead, format: String, bytes: Int64, asked page: Int) -> SourceInfo {
        let header = read.header
        let stored = header.size
        let orientation = Int(vips_image_get_orientation(header.pointer))
        let swap = vips_image_get_orientation_swap(header.pointer) != 0
        var info = SourceInfo(
            size: swap ? Size(width: stored.height, height: stored.width) : stored, storedSize: stored,
            orientation: (1...8).contains(orientation) ? orientation : 1,
            hasAlpha: header.hasAlpha && format != "pdf", format: format, bytes: bytes,
            profile: ICCProfile.kind(header.iccProfile), frames: read.frames, pages: read.paged ? read.count : 1,
            page: read.paged && page <= read.count ? page : 1)
        info.embeddedThumbnail = read.embedded
        return info
    }

    /// An SVG or a PDF page drawn at `size`: over `limits.maxSourcePixels` is a 413, as a
    /// raster source of that many pixels would be.
    func checkDrawn(_ size: Size, _ info: SourceInfo) throws(ImagingError) {
        try checkPixels(size, "drawing this \(info.format) at")
    }

    /// A 413 when `size` is over `limits.maxSourcePixels`; `what` begins the message.
    func checkPixels(_ size: Size, _ what: String) throws(ImagingError) {
        let pixels = size.pixels()
        guard pixels <= limits.maxSourcePixels else {
            throw ImagingError(
                .limits,
                AspectError(
                    .sourceTooLarge,
                    "\(what) \(size) = \(pixels) pixels, over limits.maxSourcePixels \(limits.maxSourcePixels)"))
        }
    }

    func checkWhole(_ whole: Size, frames: Int) throws(ImagingError) {
        guard whole.pixels(frames: frames) <= limits.maxSourcePixels else {
            throw ImagingError(
                .limits,
                AspectError(
                    .badParam,
                    "this crop scales the whole source to \(whole) pixels\(frames > 1 ? " a frame" : "") before "
                        + "cutting the region out, over limits.maxSourcePixels \(limits.maxSourcePixels); ask for a "
                        + "larger region or a smaller size"))
        }
    }
}
