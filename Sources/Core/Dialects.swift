/// What the two URL dialects (imgproxy's and thumbor's) settle once the source's header is
/// read: the output format a URL without one keeps, and whether the native parameters say
/// the same geometry on this source (then the URL shares the native request's cache entry
/// and ETag).
public enum Dialects {
    /// Whether `request` must see the source's header before it has a key.
    public static func needsSource(_ request: ThumbRequest) -> Bool {
        request.format == .source || request.imgproxy != nil || request.thumbor != nil || request.raw
            || !request.passthrough.isEmpty
    }

    /// `request` settled by the source's header.
    public static func settle(_ request: ThumbRequest, source: SourceDescription, limits: RequestLimits)
        -> ThumbRequest
    {
        var r =
            request.thumbor != nil
            ? ThumborURL.settle(request, source: source, limits: limits)
            : ImgproxyURL.settle(request, source: source, limits: limits)
        if r.raw || !r.passthrough.isEmpty { r.sourceFormat = source.format }
        return r
    }

    /// `r` with the format its dialect keeps on this source when the URL names none.
    static func keepFormat(_ r: inout ThumbRequest, source: SourceDescription) {
        guard r.format == .source else { return }
        let moving = source.frames > 1 && !r.firstFrameOnly || (r.frameCount ?? 1) > 1
        r.format = FormatChoice(rawValue: keptFormat(source, request: r, animated: moving).rawValue) ?? .jpeg
    }

    /// The format a URL that names none gives on this source.
    public static func keptFormat(_ source: SourceDescription, request: ThumbRequest, animated: Bool) -> ImageFormat {
        request.thumbor != nil
            ? ThumborURL.keptFormat(source, request: request, animated: animated)
            : ImgproxyURL.keptFormat(source, request: request, animated: animated)
    }
}
