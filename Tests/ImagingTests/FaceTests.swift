import Core
import Foundation
import Imaging
import ImagingTestSupport
import Syscalls
import TestSupport
import Testing

/// gravity=face on real photographs (SPEC: Faces), fetched by scripts/fetch-faces.sh; the
/// faces' boxes below were marked by hand on each photo, as fractions of its upright size.
@Suite struct FaceTests {
    /// Eileen Collins, frontal (scikit-image's astronaut.png, 512×512).
    static let astronaut = FaceBox(x: 0.348, y: 0.156, w: 0.180, h: 0.191)
    /// Grace Hopper, frontal (matplotlib's grace_hopper.jpg, 512×600).
    static let hopper = FacePortrait.hopper
    /// Two men on a touchline (ultralytics' zidane.jpg, 1280×720): the one on the right
    /// frontal; the one left of centre turned three-quarters and shouting, which a frontal
    /// detector misses (so do OpenCV's frontal cascades).
    static let right = FaceBox(x: 0.708, y: 0.156, w: 0.122, h: 0.217)

    /// Two faces far apart: Grace Hopper (512×600) at the left of a 1224×600 canvas and
    /// again, mirrored, at its right edge (x 712): faces about 100 pixels wide in the
    /// detector's 640-pixel copy, where the astronaut's beside her would be under dlib's 80.
    static let pair = Size(width: 1224, height: 600)
    static let pairFaces = [
        FaceBox(x: hopper.x * 512 / 1224, y: hopper.y, w: hopper.w * 512 / 1224, h: hopper.h),
        FaceBox(x: (712 + (1 - hopper.x - hopper.w) * 512) / 1224, y: hopper.y, w: hopper.w * 512 / 1224, h: hopper.h),
    ]

    /// The two on one canvas, as a PNG in `fixtures`.
    static func twoPeople(_ fixtures: Fixtures) throws -> String {
        let b = try ImageFile.decode(Array(try Data(contentsOf: URL(fileURLWithPath: try photo("grace_hopper.jpg")))))
        var canvas = RawImage(width: pair.width, height: pair.height, filledWith: [128, 128, 128])
        for (left, mirrored) in [(0, false), (712, true)] {
            for y in 0..<b.height {
                for x in 0..<b.width {
                    let from = (y * b.width + (mirrored ? b.width - 1 - x : x)) * b.bands
                    let to = (y * pair.width + x + left) * 3
                    for k in 0..<3 { canvas.pixels[to + k] = b.pixels[from + min(k, b.bands - 1)] }
                }
            }
        }
        return try fixtures.write("two.png", ImageFile.encode(canvas, as: .png))
    }

    static func photo(_ name: String) throws -> String { try Photos.path("faces/" + name) }

    static func iou(_ a: FaceBox, _ b: FaceBox) -> Double {
        let w = min(a.x + a.w, b.x + b.w) - max(a.x, b.x)
        let h = min(a.y + a.h, b.y + b.h) - max(a.y, b.y)
        guard w > 0, h > 0 else { return 0 }
        let inter = w * h
        return inter / (a.w * a.h + b.w * b.h - inter)
    }

    static func faces(_ path: String) throws -> [FaceBox] {
        let facts = try Thumbnailer(limits: ImagingLimits()).describe(
            file: OpenFile.opening(path), reading: SourceReading(faces: true))
        return try #require(facts.faces)
    }

    /// Whether `window` (pixels of an image `size`) holds `face` (fractions of it) whole.
    static func holds(_ window: Rect, _ face: FaceBox, in size: Size) -> Bool {
        let (w, h) = (Double(size.width), Double(size.height))
        return Double(window.x) <= face.x * w + 1 && Double(window.y) <= face.y * h + 1
            && Double(window.x + window.width) >= (face.x + face.w) * w - 1
            && Double(window.y + window.height) >= (face.y + face.h) * h - 1
    }

    @Test(arguments: [("astronaut.png", astronaut), ("grace_hopper.jpg", hopper)])
    func theFaceIsFoundWhereAPersonMarkedIt(name: String, marked: FaceBox) throws {
        let found = try Self.faces(try Self.photo(name))
        #expect(found.count == 1, "\(found)")
        #expect(found.map { Self.iou($0, marked) }.max() ?? 0 >= 0.5, "\(found) against \(marked)")
    }

    @Test func bothPeopleAreFound() throws {
        let fixtures = try Fixtures()
        let found = try Self.faces(try Self.twoPeople(fixtures))
        #expect(found.count == 2, "\(found)")
        for marked in Self.pairFaces {
            #expect(found.map { Self.iou($0, marked) }.max() ?? 0 >= 0.5, "\(found) against \(marked)")
        }
    }

    @Test func aFaceTurnedAwayIsMissedAndTheOtherFound() throws {
        let found = try Self.faces(try Self.photo("zidane.jpg"))
        #expect(found.count == 1 && Self.iou(found[0], Self.right) >= 0.5, "\(found)")
    }

    @Test func aPhotoWithoutAFaceHasNone() throws {
        #expect(try Self.faces(try Self.photo("coffee.png")).isEmpty)
    }

    /// A 2:1 cut of the square astronaut keeps a 512×256 band: the centre's (rows 128–384)
    /// cuts her forehead off; the face's holds her face whole, and so does a circle.
    @Test(arguments: ["", "&shape=circle"])
    func aCutKeepsTheWholeFace(shape: String) throws {
        let path = try Self.photo("astronaut.png")
        let (_, centre) = try thumb(path, "w=512&ratio=2:1&mode=fill&format=png" + shape)
        let (img, face) = try thumb(path, "w=512&ratio=2:1&mode=fill&format=png&gravity=face" + shape)
        #expect(img.width == 512 && img.height == 256)
        let size = face.plan.resized
        let window = try #require(face.plan.crop)
        #expect(Self.holds(window, Self.astronaut, in: size), "\(window)")
        #expect(!Self.holds(try #require(centre.plan.crop), Self.astronaut, in: size))
        // The grown box fits in the band: it is kept whole, not only the face.
        let kept = try #require(Faces.keptBox([Self.astronaut]))
        #expect(Self.holds(window, kept, in: size), "\(window) against \(kept)")
    }

    /// Both faces fit in a 2:1 cut of the 1224×600 canvas (the grown box is about 1,100
    /// pixels wide, the cut 1,200); in a 1:1 cut (600) they cannot, and the cut keeps the
    /// box's centre.
    @Test func twoPeopleAreKeptWhenTheBoxAllowsElseTheirCentre() throws {
        let fixtures = try Fixtures()
        let path = try Self.twoPeople(fixtures)
        let kept = try #require(Faces.keptBox(Self.pairFaces))
        let (_, wide) = try thumb(path, "h=600&ratio=2:1&mode=fill&format=jpeg&gravity=face")
        let window = try #require(wide.plan.crop)
        for face in Self.pairFaces { #expect(Self.holds(window, face, in: wide.plan.resized), "\(window), \(face)") }
        #expect(Self.holds(window, kept, in: wide.plan.resized), "the grown box whole: \(window), \(kept)")
        let (_, narrow) = try thumb(path, "h=600&ratio=1&mode=fill&format=jpeg&gravity=face")
        let cut = try #require(narrow.plan.crop)
        // The middle of the faces found (on a copy of their own: a few pixels from the
        // render's), not of the marked ones.
        let found = try #require(Faces.keptBox(try Self.faces(path)))
        let middle = (found.x + found.w / 2) * Double(narrow.plan.resized.width)
        #expect(abs(Double(cut.x) + Double(cut.width) / 2 - middle) <= 8, "\(cut) against a middle at \(middle)")
    }

    @Test func withoutAFaceTheCutIsSmarts() throws {
        let path = try Self.photo("coffee.png")
        let (_, face) = try thumb(path, "w=200&ratio=1&mode=fill&format=png&gravity=face")
        let (_, smart) = try thumb(path, "w=200&ratio=1&mode=fill&format=png&gravity=smart")
        #expect(face.bytes == smart.bytes && face.plan.gravity == .smart)
    }

    /// grace_hopper.jpg stored turned a quarter with EXIF Orientation=6: the face is found
    /// on the upright picture, where it is in the upright original.
    @Test func facesAreFoundOnTheUprightPicture() throws {
        let found = try Self.faces(try Self.photo("grace_hopper-turned.jpg"))
        #expect(found.count == 1 && found.map { Self.iou($0, Self.hopper) }.max() ?? 0 >= 0.5, "\(found)")
    }
}

/// gravity=face on a photo stored in each EXIF orientation (issue 50): the cut is made on
/// the upright picture and holds the face, wherever the stored pixels put it.
@Suite struct FaceOrientationTests {
    @Test(arguments: 1...8, [true, false])
    func theCutHoldsTheFaceInEveryOrientation(orientation: Int, fast: Bool) throws {
        let fixtures = try Fixtures()
        let (upright, face) = try FacePortrait.make(hopper: try FaceTests.photo("grace_hopper.jpg"))
        let path = try fixtures.write(
            "o\(orientation).jpg",
            ImageFile.encode(upright.stored(orientation: orientation), as: .jpeg, orientation: orientation))
        let limits = ImagingLimits(fastShrinkOnLoad: fast)
        let (img, rendered) = try thumb(path, "w=256&ratio=1&mode=fill&format=png&gravity=face", limits: limits)
        #expect(rendered.plan.source == Size(width: 983, height: 1600))
        let window = try #require(rendered.plan.crop)
        #expect(FaceTests.holds(window, face, in: rendered.plan.resized), "o\(orientation): \(window)")
        // Read off the pixels: the answer is the upright picture's rows at that window.
        let uprightPath = try fixtures.write("upright.png", ImageFile.encode(upright, as: .png))
        let (whole, _) = try thumb(uprightPath, "w=256&format=png")
        let found = img.offset(in: whole)
        #expect(found.x == 0 && abs(found.y - window.y) <= 2 && found.meanDifference < 8, "o\(orientation): \(found)")
    }
}

/// Small faces (issue 50): a face about 40 pixels high on the 640-pixel copy is under
/// dlib's 80×80 window; the second look, on the copy scaled up twice, finds it, unless
/// `faces.upsample` is off.
@Suite struct SmallFaceTests {
    /// A 2400×1600 picture with Grace Hopper 480 pixels wide at its left: her face is 150
    /// pixels high, 40 on the 640-pixel copy.
    static func picture(_ fixtures: Fixtures) throws -> (path: String, face: FaceBox) {
        let (picture, face) = try FacePortrait.make(
            hopper: try FaceTests.photo("grace_hopper.jpg"), width: 480, size: Size(width: 2400, height: 1600))
        return (try fixtures.write("small.png", ImageFile.encode(picture, as: .png)), face)
    }

    static func faces(_ path: String, upsample: Bool) throws -> [FaceBox] {
        var limits = ImagingLimits()
        limits.faceUpsample = upsample
        let facts = try Thumbnailer(limits: limits).describe(
            file: OpenFile.opening(path), reading: SourceReading(faces: true))
        return try #require(facts.faces)
    }

    @Test func aFortyPixelFaceIsFoundOnTheSecondLook() throws {
        let fixtures = try Fixtures()
        let (path, face) = try Self.picture(fixtures)
        #expect(try Self.faces(path, upsample: false).isEmpty)
        let found = try Self.faces(path, upsample: true)
        #expect(found.count == 1 && FaceTests.iou(found[0], face) >= 0.4, "\(found) against \(face)")
    }

    /// The cut holds it: a square of the 2400×1600 picture keeps its left edge.
    @Test func theCutHoldsTheSmallFace() throws {
        let fixtures = try Fixtures()
        let (path, face) = try Self.picture(fixtures)
        let (_, rendered) = try thumb(path, "w=300&ratio=1&mode=fill&format=png&gravity=face")
        let window = try #require(rendered.plan.crop)
        #expect(
            rendered.plan.gravity == .focus && FaceTests.holds(window, face, in: rendered.plan.resized), "\(window)")
    }
}
