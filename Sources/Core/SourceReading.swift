/// `trim`: the uniform border cut away before the geometry (SPEC: Before the geometry).
/// The native parameter gives the threshold alone; a dialect's may give the rest.
public struct Trim: Equatable, Hashable, Sendable, Codable {
    /// Levels (of 255) a border pixel may differ from the background in every channel:
    /// libvips' `find_trim` threshold.
    public var threshold: Double
    /// The border's colour; nil: the top-left pixel's.
    public var color: Color?
    /// The smaller of the two opposite cuts on both sides.
    public var equalHorizontal: Bool
    public var equalVertical: Bool
    /// The bottom-right pixel's colour is the border's.
    public var bottomRight: Bool

    public init(
        threshold: Double, color: Color? = nil, equalHorizontal: Bool = false, equalVertical: Bool = false,
        bottomRight: Bool = false
    ) {
        self.threshold = threshold
        self.color = color
        self.bottomRight = bottomRight
        self.equalHorizontal = equalHorizontal
        self.equalVertical = equalVertical
    }

    /// `N`, or `N:rrggbb:h:v` when more than the threshold is set (the canonical form).
    public var text: String {
        let t = decimalString(threshold)
        guard color != nil || equalHorizontal || equalVertical || bottomRight else { return t }
        let corner = bottomRight ? ":br" : ""
        return "\(t):\(color?.description ?? ""):\(equalHorizontal ? 1 : 0):\(equalVertical ? 1 : 0)\(corner)"
    }
}

/// How a renderer reads the source before the plan: which page, what border is cut
/// away, and whether EXIF orientation is applied.
public struct SourceReading: Equatable, Sendable, Codable {
    /// From 1.
    public var page: Int
    public var trim: Trim?
    /// False (a dialect's option): the pixels as stored, sized as stored.
    public var autoRotate: Bool
    /// `/info`: the faces in the picture too (SPEC: Faces).
    public var faces: Bool
    /// `profile=keep`: an RGB source's embedded profile
    /// kept, its pixels not converted to sRGB.
    public var keepProfile = false
    /// `thumbnail=embedded`: a HEIF/AVIF's embedded
    /// thumbnail decoded in place of the picture, when it has one.
    public var embeddedThumbnail = false

    public init(page: Int = 1, trim: Trim? = nil, autoRotate: Bool = true, faces: Bool = false) {
        self.page = page
        self.trim = trim
        self.autoRotate = autoRotate
        self.faces = faces
    }
}

extension ThumbRequest {
    /// What the renderer needs to read the source for this request.
    /// `/info` finds faces when asked (`faces=1`) and when the gravity is `face`.
    public var reading: SourceReading {
        var r = SourceReading(page: page, trim: trim, autoRotate: autoRotate, faces: faces || gravity == .face)
        r.keepProfile = keepProfile
        r.embeddedThumbnail = embeddedThumbnail
        return r
    }
}
