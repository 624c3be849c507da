// libFuzzer entry for the three URL forms (native `/thumb?…`, imgproxy, thumbor): compiled
// together with Sources/Core and the dialects' grammars and planners (Sources/Imgproxy,
// Sources/Thumbor, but their signers) by fuzz/urls.sh, outside SwiftPM, so only this binary carries
// the sanitizers. Each input is parsed, put in its canonical form, settled on a source
// described by the input's header (as the service settles a dialect URL once the header is
// read) and planned, along the path ServiceHandler takes. A thrown AspectError is a 4xx
// answer and fine; only a trap (overflow, Int(Double) of a huge or NaN value, an index out
// of range) or the round-trip check below is a finding.
//
// Input: an 8-byte header, then the URL text.
//   0     form: (byte & 0x7F) % 3 (0 native, 1 imgproxy, 2 thumbor), unless URLFUZZ_FORM is set
//         (native|imgproxy|thumbor: then this byte is ignored); bit 7: the source has alpha
//   1-2   stored width, big-endian code (see `dimension`): 1 … 16384, 1 … 64, 16385 … ~98000,
//   3-4   stored height    or one of the extremes (1, 65535, 65536, 100000, …)
//   5     format: byte % 9 (jpeg png webp gif heif tiff svg pdf mp4); byte / 9 gives the
//         frames (webp, gif), pages (heif, tiff, pdf) or duration (mp4)
//   6     EXIF orientation 1 + byte % 8 (5 … 8 swap the sides unless auto_rotate:0);
//         byte / 8: the window a `trim` finds (0: none)
//   7     bits 0-2: the watermark's size; 3-4: the Accept header; 5: Save-Data (native)
//   8…    the text: after `/thumb?` (native), `/insecure/` (imgproxy), `/unsafe/` (thumbor).
//         Only the bytes a request target may carry (0x21 … 0x7E) are kept.

import Foundation

private enum Form: Int { case native, imgproxy, thumbor }

/// URLFUZZ_FORM, read once: fuzz/urls.sh fixes the form for a run.
private let fixedForm: Form? =
    switch ProcessInfo.processInfo.environment["URLFUZZ_FORM"] {
    case "native": .native
    case "imgproxy": .imgproxy
    case "thumbor": .thumbor
    default: nil
    }

/// The configuration of a service with both dialects on, no imgproxy key (any signature
/// segment accepted), thumbor.allowUnsafe, one watermark and a few presets.
private func limits(watermark: Size) -> RequestLimits {
    RequestLimits(
        watermarks: [
            "logo": Watermark(
                src: "brand/logo.png", position: .southeast, opacity: 0.8, scale: 0.2, margin: 12, size: watermark,
                digest: "fuzz")
        ])
}

private let nativePresets: Presets = {
    let texts = [
        "avatar": "w=64&h=64&mode=fill&gravity=smart&shape=circle", "card": "w=300&ratio=4:3&mode=fill",
        "mark": "w=600&wm=logo&format=webp",
    ]
    return try! Presets(texts, limits: limits(watermark: Size(width: 200, height: 80)))
}()

private let imgproxySettings = ImgproxyURL.Settings(
    root: .folder("/srv/images"), presets: ["thumb": "rs:fill:300:200/q:80", "wide": "w:1200/ex:1"],
    watermark: "logo")
private let thumborSettings = ThumborURL.Settings(root: .folder("/srv/images"), watermarks: ["logo"])

/// URLFUZZ_TRACE set: each input's outcome on stderr (to see that seeds reach the plan).
private let trace = ProcessInfo.processInfo.environment["URLFUZZ_TRACE"] != nil

private func say(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

/// A fixed clock, so `expires` behaves the same on every run.
private let now: Int64 = 1_750_000_000

private let extremes = [1, 2, 3, 7, 255, 256, 4095, 4096, 4097, 16383, 16384, 32767, 32768, 65535, 65536, 100_000]

/// A side from two bytes: mostly ordinary sizes, some tiny, some huge, some extremes.
private func dimension(_ hi: UInt8, _ lo: UInt8) -> Int {
    let v = Int(hi) << 8 | Int(lo)
    let n = v & 0x3FFF
    switch v >> 14 {
    case 0: return 1 + n
    case 1: return 1 + n % 64
    case 2: return 16385 + n * 5
    default: return extremes[n % extremes.count]
    }
}

private let formats = ["jpeg", "png", "webp", "gif", "heif", "tiff", "svg", "pdf", "mp4"]
private let durations: [Double] = [1, 0.04, 0.5, 1.5, 2, 3, 10, 59.94, 3600, 0.001, 86400, 0]
private let watermarkSizes = [
    Size(width: 200, height: 80), Size(width: 1, height: 1), Size(width: 1, height: 4096),
    Size(width: 4096, height: 1), Size(width: 65535, height: 65535), Size(width: 100, height: 100),
    Size(width: 3, height: 1000), Size(width: 16384, height: 2),
]
private let accepts: [String?] = [nil, "image/avif,image/webp,*/*", "image/webp", "*/*"]

/// What the renderer's header would say of the source for this request: upright unless
/// `auto_rotate:0` (Thumbnailer+Open), and the window found when a `trim` is asked
/// (Thumbnailer+Trim). Any size reaches the plan: `limits.maxSourcePixels` is configurable,
/// and an SVG or a PDF is not held to it.
private func describe(_ h: [UInt8], for request: ThumbRequest) -> SourceDescription {
    let stored = Size(width: dimension(h[1], h[2]), height: dimension(h[3], h[4]))
    let orientation = 1 + Int(h[6]) % 8
    let size =
        request.autoRotate && orientation >= 5 ? Size(width: stored.height, height: stored.width) : stored
    let format = formats[Int(h[5]) % formats.count]
    let extra = Int(h[5]) / formats.count
    var d = SourceDescription(
        size: size, hasAlpha: h[0] & 0x80 != 0 && !["jpeg", "pdf", "mp4"].contains(format), format: format,
        bytes: 1 + Int64(size.width) * 3)
    switch format {
    case "webp", "gif": d.frames = 1 + extra
    case "heif", "tiff", "pdf": d.pages = 1 + extra
    case "mp4": d.duration = durations[extra % durations.count]
    default: break
    }
    let window = Int(h[6]) / 8
    if request.trim != nil, window != 0 {
        let (w, hh) = (size.width, size.height)
        let left = w * (window & 3) / 8
        let top = hh * (window >> 2 & 3) / 8
        let right = w * (window >> 4 & 1) / 4
        let width = max(1, w - left - right)
        let height = max(1, hh - top - (window >> 4 & 1) * hh / 4)
        if width < w || height < hh {
            d.trim = Rect(x: left, y: top, width: width, height: height)
            d.untrimmed = size
            d.size = Size(width: width, height: height)
        }
    }
    return d
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzURLs(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: count)
    guard bytes.count >= 8 else { return 0 }
    let header = Array(bytes[0..<8])
    // The request line allows these bytes alone in a target.
    let text = String(decoding: bytes[8...].filter { (0x21...0x7E).contains($0) }, as: UTF8.self)
    let form = fixedForm ?? Form(rawValue: Int(header[0] & 0x7F) % 3)!
    let limits = limits(watermark: watermarkSizes[Int(header[7]) & 7])
    let accept = accepts[Int(header[7]) >> 3 & 3]
    let saveData = header[7] & 0x20 != 0

    var request: ThumbRequest
    do throws(AspectError) {
        switch form {
        case .native:
            // ServiceHandler.thumb: the query up to a fragment, presets expanded, parsed.
            let query = text.prefix { $0 != "#" }
            let params = try QueryParameters.decode(query)
            request = try ThumbRequest.parse(nativePresets.expand(params, onlyPresets: false), limits: limits)
            // The canonical form is a request of its own: it parses (unless a side it works
            // out is past the limits) to a request with the same canonical form.
            let canonical = request.canonical
            if let again = try? ThumbRequest.parse(query: canonical, limits: limits), again.canonical != canonical {
                say("canonical form not stable:\n  \(canonical)\n  \(again.canonical)")
                abort()
            }
            if saveData, request.quality == nil, !request.autoQuality { request.saveData = true }
        case .imgproxy:
            // ServiceHandler.imgproxy: the raw path up to `?`, any signature (no key).
            let path = "/insecure/" + text.prefix { $0 != "?" }
            request = try ImgproxyURL.parse(path: path, settings: imgproxySettings, limits: limits, now: now).request
        case .thumbor:
            // ServiceHandler.thumbor: /unsafe/ answered (thumbor.allowUnsafe).
            let path = "/unsafe/" + text.prefix { $0 != "?" }
            request = try ThumborURL.parse(Substring(path), settings: thumborSettings, limits: limits).request
        }
        _ = request.canonical
        // ServiceHandler.settling, then identified: settled on the header, keyed, planned.
        let source = describe(header, for: request)
        if request.needsSource {
            switch form {
            case .native: request.note(source)
            case .imgproxy: request = ImgproxyURL.settle(request, source: source, limits: limits)
            case .thumbor: request = ThumborURL.settle(request, source: source, limits: limits)
            }
        }
        _ = request.canonical
        _ = request.reading
        _ = request.searchesQuality(limits)
        if let format = request.sourceFormat, request.answersSource(format: format) { return 0 }
        let order = try RenderOrder.plan(request, source: source, limits: limits, accept: accept)
        _ = order.plan.hasAlpha(sourceHasAlpha: source.hasAlpha)
        if trace {
            say("\(form) \(source.size) \(source.format): \(request.canonical) -> \(order.plan.output) \(order.format)")
        }
    } catch {
        // A 4xx: what the service answers such a URL with.
        if trace { say("\(form): \(error.code.rawValue) \(error.message)") }
    }
    return 0
}
