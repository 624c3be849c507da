import CVips
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
        var header = try VImage.make(.header, unreadable) { cvips_open_header(first.pointer, 0, 0, $0) }
        // GIF and WebP pages are an animation's frames; TIFF, HEIF and PDF pages are pages
        // (SPEC: Source formats), drawn one at a time: the one asked for.
        let count = max(1, Int(vips_image_get_n_pages(header.pointer)))
        let paged = LoaderName.pagedFormats.contains(format)
        let frames = paged ? 1 : count
        if paged, page > 1, page <= count {
            let source = try VSource(input, deadline: deadline)
            header = try VImage.make(.header, unreadable) { cvips_open_header(source.pointer, Int32(page - 1), 0, $0) }
        }
        // `thumbnail=embedded` (imgproxy's enforce_thumbnail): a HEIF/AVIF's embedded
        // thumbnail in place of the picture, when it has one; the geometry is planned on it.
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
        info.embeddedThumbnail = embedded
        if reading.keepProfile, info.profile == .other, header.bands >= 3,
            vips_image_get_interpretation(header.pointer) == VIPS_INTERPRETATION_sRGB
                || vips_image_get_interpretation(header.pointer) == VIPS_INTERPRETATION_RGB16
        {
            info.keptProfile = header.iccProfile
        }
        if !reading.autoRotate {
            // imgproxy's auto_rotate:0: the pixels as stored.
            info.size = stored
            info.orientation = 1
            info.noRotate = true
        }
        return (input, info)
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
