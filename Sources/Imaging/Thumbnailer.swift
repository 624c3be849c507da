internal import CVips
import Core
import Foundation
import Syscalls

/// The libvips pipeline: a source file and Core's plan in, encoded bytes out.
/// A value with no state but its limits: any number of threads may use one at once.
public struct Thumbnailer: Sendable {
    public private(set) var limits: ImagingLimits
    /// The configured watermarks' images, by name, read at start-up (`watermark(file:)`).
    public var watermarks: [String: WatermarkImage] = [:]
    /// For a profile (`aspect-bench profile`): told each stage's name and its nanoseconds,
    /// each step's picture made whole in memory before it is timed, so that a step's work
    /// is its own (libvips is lazy: else the encode would do every step's work). Nil in
    /// the service.
    public var stageTimer: (@Sendable (String, UInt64) -> Void)?

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
        /// `format=best`'s choice (`format` is its format), when it chose.
        public var chosen: BestChoice?
    }

    /// Opens the file, then the whole job as `thumbnail(file:…)` does.
    public func thumbnail(path: String, request: ThumbRequest, requestLimits: RequestLimits, accept: String? = nil)
        throws(ImagingError) -> Rendered
    {
        try thumbnail(file: OpenFile.opening(path), request: request, requestLimits: requestLimits, accept: accept)
    }

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
        var (input, source) = try timed("open") { () throws(ImagingError) in
            try open(file: file, reading: reading, deadline: deadline)
        }
        if let trim = reading.trim { source = try trimmed(input, source, trim, deadline: deadline) }
        let wanted = try timed("plan") { () throws(ImagingError) in
            do throws(AspectError) {
                return try order(source.description)
            } catch {
                throw ImagingError(.header, error)
            }
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
        var wanted = wanted
        // gravity=face: the cut is centred on the faces, found now (SPEC: Faces); a still's
        // on its render's decode (Thumbnailer+Still).
        if wanted.animated, wanted.plan.gravity == .face, wanted.plan.mode == .fill {
            wanted.plan = wanted.plan.centred(onFaces: try findFaces(input, source, deadline: deadline))
        }
        var facts: SourceFacts?
        if let grid = wanted.grid {
            let sheet = try renderStoryboard(input, source: source, order: wanted, grid: grid, deadline: deadline)
            return Rendered(
                bytes: sheet.bytes, format: sheet.chosen?.format ?? wanted.format, plan: wanted.plan,
                quality: sheet.quality, facts: nil, chosen: sheet.chosen)
        }
        let encoded =
            wanted.animated && input.video != nil
            ? Encoder.Encoded(bytes: try renderVideoPreview(input, source: source, order: wanted, deadline: deadline))
            : wanted.animated
                ? Encoder.Encoded(
                    bytes: try renderAnimation(
                        input, source: source, plan: wanted.plan, format: wanted.format, quality: wanted.quality,
                        maxBytes: wanted.maxBytes, deadline: deadline))
                : try render(
                    input, source: source, plan: &wanted.plan, format: wanted.format, quality: wanted.quality,
                    maxBytes: wanted.maxBytes, autoQuality: wanted.autoQuality, best: wanted.best, wantFacts: wantFacts,
                    facts: &facts, deadline: deadline)
        return Rendered(
            bytes: encoded.bytes, format: encoded.chosen?.format ?? wanted.format, plan: wanted.plan,
            quality: encoded.quality, facts: facts, chosen: encoded.chosen)
    }

    /// Reads what the file's header says of `page` and checks the limits, decoding no pixels.
    public func probe(path: String, page: Int = 1) throws(ImagingError) -> SourceInfo {
        try open(file: OpenFile.opening(path), reading: SourceReading(page: page), deadline: .none).info
    }

    /// `body`, timed for `stageTimer` when there is one.
    func timed<T>(_ stage: String, _ body: () throws(ImagingError) -> T) throws(ImagingError) -> T {
        guard let stageTimer else { return try body() }
        let start = Clock.now()
        let value = try body()
        stageTimer(stage, Clock.now() - start)
        return value
    }
}
