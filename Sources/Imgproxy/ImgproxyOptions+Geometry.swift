import Core

/// The readers of the options that shape the picture (its size, crop, canvas, turn and
/// watermark), one per option as imgproxy's `apply…Option` functions; `apply` calls them
/// with the name as written and a non-empty list of arguments.
extension OptionReader {
    /// `resize:TYPE:WIDTH:HEIGHT:ENLARGE:EXTEND…`: the resizing type, then the rest as `size`.
    mutating func applyResize(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...8)
        if !args[0].isEmpty { try apply("resizing_type", [args[0]]) }
        if args.count > 1 { try apply("size", Array(args.dropFirst())) }
    }

    /// `size:WIDTH:HEIGHT:ENLARGE:EXTEND…`: an empty argument leaves its field as it is.
    mutating func applySize(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...7)
        if !args[0].isEmpty { geometry.width = try int(written, args[0]) }
        if args.count > 1, !args[1].isEmpty { geometry.height = try int(written, args[1]) }
        if args.count > 2, !args[2].isEmpty { geometry.enlarge = try bool(written, args[2]) }
        if args.count > 3, !args[3].isEmpty { try apply("extend", Array(args.dropFirst(3))) }
    }

    /// `resizing_type:TYPE`.
    mutating func applyResizingType(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...1)
        guard let t = ImgproxyGeometry.Resize(rawValue: args[0]) else {
            throw bad(written, args, "must be fit, fill, fill-down, force or auto")
        }
        geometry.resize = t
    }

    /// `width`, `height`, `min-width` and `min-height`: one whole number into `side`.
    mutating func applyDimension(_ written: String, _ args: [String], _ side: WritableKeyPath<ImgproxyGeometry, Int>)
        throws(AspectError)
    {
        try count(written, args, 1...1)
        geometry[keyPath: side] = try int(written, args[0])
    }

    /// `zoom:X:Y`: one factor for both sides, or one each.
    mutating func applyZoom(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...2)
        geometry.zoomWidth = try float(written, args[0], above: true)
        geometry.zoomHeight = args.count > 1 ? try float(written, args[1], above: true) : geometry.zoomWidth
    }

    /// `dpr:N`, at most `limits.maxDpr`.
    mutating func applyDpr(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...1)
        let d = try float(written, args[0], above: true)
        guard d <= limits.maxDpr else {
            throw bad(written, args, "is over limits.maxDpr \(decimalString(limits.maxDpr))")
        }
        geometry.dpr = d
    }

    /// `enlarge:BOOL`.
    mutating func applyEnlarge(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...1)
        geometry.enlarge = try bool(written, args[0])
    }

    /// `extend` and `extend_aspect_ratio` (`name`, the full name): `BOOL:GRAVITY…`, where the
    /// gravity finds nothing (no `sm`, no `obj`).
    mutating func applyExtend(_ name: String, _ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...4)
        let on = try bool(written, args[0])
        let g = args.count > 1 ? try gravity(written, Array(args.dropFirst()), allowSmart: false) : ImgproxyGravity()
        if name == "extend" {
            (geometry.extend, geometry.extendGravity) = (on, g)
        } else {
            (geometry.extendAspectRatio, geometry.extendAspectRatioGravity) = (on, g)
        }
    }

    /// `crop:WIDTH:HEIGHT:GRAVITY…`: an empty or missing height is 0 (the source's), no
    /// gravity the request's.
    mutating func applyCrop(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...5)
        geometry.cropWidth = try float(written, args[0])
        geometry.cropHeight = args.count > 1 && !args[1].isEmpty ? try float(written, args[1]) : 0
        geometry.cropGravity = args.count > 2 ? try gravity(written, Array(args.dropFirst(2))) : nil
    }

    /// `padding:TOP:RIGHT:BOTTOM:LEFT`, CSS's way: a missing or empty right or bottom takes
    /// the top's, a left the right's; an empty top keeps the one before.
    mutating func applyPadding(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...4)
        func side(_ i: Int, _ fallback: Int) throws(AspectError) -> Int {
            i < args.count && !args[i].isEmpty ? try int(written, args[i], max: limits.maxDimension) : fallback
        }
        let top = try side(0, geometry.padding[0])
        let right = try side(1, top)
        let bottom = try side(2, top)
        let left = try side(3, right)
        geometry.padding = [top, right, bottom, left]
    }

    /// `rotate:N`: a multiple of 90, either way, kept as a clockwise turn under a full one.
    mutating func applyRotate(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...1)
        guard let n = Int(args[0]), n % 90 == 0 else { throw bad(written, args, "must be a multiple of 90") }
        geometry.rotate = (n % 360 + 360) % 360
        request.rotate = geometry.rotate
    }

    /// `flip:HORIZONTAL:VERTICAL`: an empty argument leaves its flip as it is.
    mutating func applyFlip(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...2)
        if !args[0].isEmpty { geometry.flipHorizontal = try bool(written, args[0]) }
        if args.count > 1, !args[1].isEmpty { geometry.flipVertical = try bool(written, args[1]) }
    }

    /// `watermark:OPACITY:POSITION:X:Y:SCALE`: the configured watermark; opacity 0 is none.
    mutating func applyWatermark(_ written: String, _ args: [String]) throws(AspectError) {
        try count(written, args, 1...7)
        let opacity = try float(written, args[0])
        guard opacity <= 1 else { throw bad(written, args, "the opacity must be from 0 to 1") }
        guard opacity > 0 else {
            geometry.watermark = nil
            return
        }
        guard let mark = settings.watermark else {
            throw bad(written, args, "no watermark is configured (watermarks)")
        }
        guard args.count <= 5 else { throw bad(written, args, "takes opacity, position, X, Y and scale") }
        var position = ImgproxyGravity(.ce)
        if args.count > 1, !args[1].isEmpty {
            guard args[1] != "re" else { throw bad(written, args, "the position re (replicate) is not supported") }
            position = try gravity(written, [args[1]], allowSmart: false)
            guard position.kind != .fp else { throw bad(written, args, "the position must be a compass value") }
        }
        if args.count > 2, !args[2].isEmpty { position.x = try float(written, args[2], min: -1e6) }
        if args.count > 3, !args[3].isEmpty { position.y = try float(written, args[3], min: -1e6) }
        let scale = args.count > 4 && !args[4].isEmpty ? try float(written, args[4], above: true) : 0
        geometry.watermark = ImgproxyWatermark(name: mark, opacity: opacity, position: position, scale: scale)
    }
}
