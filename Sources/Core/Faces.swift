/// A face found in a picture: its box as fractions (0 … 1) of the upright source's width
/// and height (SPEC: Faces).
public struct FaceBox: Equatable, Sendable, Codable {
    public var x: Double
    public var y: Double
    public var w: Double
    public var h: Double

    public init(x: Double, y: Double, w: Double, h: Double) {
        self.x = x
        self.y = y
        self.w = w
        self.h = h
    }

    public var centre: (x: Double, y: Double) { (x + w / 2, y + h / 2) }
}

/// Where `gravity=face` cuts (SPEC: Faces): the bounding box of every face, each grown by
/// half a face on each side, kept whole where the cut allows, else its centre kept. A
/// fill's window centred on that box's centre (as far as the edges allow) holds the box
/// whole whenever the box fits in it, so the rule is a focal point: the box's centre.
public enum Faces {
    /// The faces a detector reports at most (the highest scores first).
    public static let most = 32
    /// The long side of the copy of the source faces are found on, at most.
    public static let detectionSide = 640

    /// The box kept: each face grown by half its width left and right and half its height
    /// above and below, their union, clamped to the picture. Nil without faces.
    public static func keptBox(_ faces: [FaceBox]) -> FaceBox? {
        guard !faces.isEmpty else { return nil }
        var (left, top, right, bottom) = (1.0, 1.0, 0.0, 0.0)
        for f in faces {
            left = min(left, f.x - f.w / 2)
            top = min(top, f.y - f.h / 2)
            right = max(right, f.x + f.w * 1.5)
            bottom = max(bottom, f.y + f.h * 1.5)
        }
        left = max(0, left)
        top = max(0, top)
        right = min(1, right)
        bottom = min(1, bottom)
        guard right > left, bottom > top else { return nil }
        return FaceBox(x: left, y: top, w: right - left, h: bottom - top)
    }

    /// The focal point of a fill's cut, as fractions of the planned source (after the
    /// region, the turn and the flip of `plan`): the kept box's centre, taken from the
    /// upright source (`plan.upright`) through them. Nil without faces, or when the
    /// region holds none of the box.
    public static func focus(_ faces: [FaceBox], plan: Plan) -> (x: Double, y: Double)? {
        guard var box = keptBox(faces) else { return nil }
        if let r = plan.region {
            let (uw, uh) = (Double(plan.upright.width), Double(plan.upright.height))
            let left = max(box.x * uw, Double(r.x))
            let top = max(box.y * uh, Double(r.y))
            let right = min((box.x + box.w) * uw, Double(r.x + r.width))
            let bottom = min((box.y + box.h) * uh, Double(r.y + r.height))
            guard right > left, bottom > top else { return nil }
            box = FaceBox(
                x: (left - Double(r.x)) / Double(r.width), y: (top - Double(r.y)) / Double(r.height),
                w: (right - left) / Double(r.width), h: (bottom - top) / Double(r.height))
        }
        var (cx, cy) = box.centre
        // libvips turns clockwise: a point (x, y) of W × H goes to (H − y, x).
        switch plan.rotate {
        case 90: (cx, cy) = (1 - cy, cx)
        case 180: (cx, cy) = (1 - cx, 1 - cy)
        case 270: (cx, cy) = (cy, 1 - cx)
        default: break
        }
        if let flip = plan.flip {
            if flip != .v { cx = 1 - cx }
            if flip != .h { cy = 1 - cy }
        }
        return (cx, cy)
    }
}

extension Plan {
    /// A `gravity=face` fill's plan once the faces are known: its window centred on them
    /// (SPEC: Faces), or, with none, libvips' attention strategy as `gravity=smart` has it.
    /// The faces are fractions of the upright source, or with `inResized` of `resized`
    /// (the plan's source scaled: its region, turn and flip already made). Any other plan
    /// is returned as it is.
    public func centred(onFaces faces: [FaceBox], inResized: Bool = false) -> Plan {
        guard gravity == .face else { return self }
        var p = self
        let point =
            inResized ? Faces.keptBox(faces)?.centre : Faces.focus(faces, plan: self)
        guard mode == .fill, let crop, let point else {
            p.gravity = mode == .fill ? .smart : .center
            return p
        }
        p.gravity = .focus
        p.crop = Geometry.cropWindow(in: resized, size: crop.size, gravity: .focus, focus: point)
        return p
    }
}
