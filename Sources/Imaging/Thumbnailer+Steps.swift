internal import CVips
import Core

/// A picture on its way through the steps: a still, or one frame of an animation or of a
/// video's preview. The steps read the plan and may settle it (the face step moves the
/// window).
struct Frame {
    var image: VImage
    var plan: Plan
    let format: ImageFormat
    /// Decoded whole, at the region's scale (the plan has a region or a turn): how the
    /// region is cut from it.
    let cut: Thumbnailer.RegionCut?
    /// A still's source, which the face step reads again and `/info`'s facts come from;
    /// nil for a frame of an animation (its faces are found once, before the frames).
    let still: Still?
    /// `/info`'s facts, made from this decode when `still.wantFacts`.
    var facts: SourceFacts?

    struct Still {
        let input: SourceInput
        let info: SourceInfo
        let wantFacts: Bool
    }

    /// When the render's time is up: checked after every step, and by the steps that
    /// read the source again.
    let deadline: Deadline

    init(
        _ image: VImage, plan: Plan, format: ImageFormat, cut: Thumbnailer.RegionCut?, still: Still? = nil,
        deadline: Deadline = .none
    ) {
        self.image = image
        self.plan = plan
        self.format = format
        self.cut = cut
        self.still = still
        self.deadline = deadline
    }
}

/// One step of the pipeline: its name, as docs/design.md lists it, and what it does.
struct Step: Sendable {
    let name: String
    let run: @Sendable (Thumbnailer, inout Frame) throws(ImagingError) -> Void
}

extension Thumbnailer {
    /// The pipeline after the decode, in order: one list for a still and for every frame
    /// of an animation (imgproxy's `processing/pipeline.go` has the same shape). Each is a
    /// function of `Pipeline`; the deadline is checked after each.
    static let steps: [Step] = [
        Step(name: "reshape") { _, f throws(ImagingError) in f.image = try Pipeline.reshape(f.image, f.cut, f.plan) },
        Step(name: "exact size") { _, f throws(ImagingError) in
            f.image = try Pipeline.exactSize(f.image, f.plan.resized)
        },
        Step(name: "facts") { t, f throws(ImagingError) in
            guard let still = f.still, still.wantFacts else { return }
            f.facts = t.factsFromRender(f.image, still.info, f.plan)
        },
        Step(name: "faces") { t, f throws(ImagingError) in
            guard let still = f.still, f.plan.gravity == .face, f.plan.mode == .fill else { return }
            f.plan = try t.centredOnFaces(f.image, still.input, still.info, f.plan, deadline: f.deadline)
        },
        Step(name: "sRGB") { _, f throws(ImagingError) in f.image = try Pipeline.toSRGB(f.image) },
        Step(name: "crop or place") { _, f throws(ImagingError) in
            f.image = try Pipeline.cropOrPlace(f.image, f.plan, format: f.format)
        },
        Step(name: "extend") { _, f throws(ImagingError) in
            f.image = try Pipeline.extend(f.image, f.plan, format: f.format)
        },
        Step(name: "effects") { _, f throws(ImagingError) in f.image = try Pipeline.effects(f.image, f.plan) },
        Step(name: "watermark") { t, f throws(ImagingError) in
            f.image = try Pipeline.watermark(f.image, f.plan, t.watermarks)
        },
        Step(name: "shape") { _, f throws(ImagingError) in f.image = try Pipeline.shape(f.image, f.plan) },
        Step(name: "padding") { _, f throws(ImagingError) in
            f.image = try Pipeline.padding(f.image, f.plan, format: f.format)
        },
        Step(name: "flatten") { _, f throws(ImagingError) in
            f.image = try Pipeline.flatten(f.image, f.plan, format: f.format)
        },
    ]

    /// `frame` through every step, the deadline checked after each.
    func runSteps(_ frame: inout Frame) throws(ImagingError) {
        for step in Self.steps {
            if stageTimer == nil {
                try step.run(self, &frame)
            } else {
                try timed(step.name) { () throws(ImagingError) in
                    try step.run(self, &frame)
                    frame.image = try frame.image.then("copy") { cvips_copy_memory($0, $1) }
                }
            }
            try frame.deadline.check()
        }
    }
}
