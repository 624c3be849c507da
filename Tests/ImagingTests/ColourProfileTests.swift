import Core
import Foundation
import Imaging
import ImagingTestSupport
import TestSupport
import Testing

/// Defect 1: embedded RGB profiles are converted to sRGB, not dropped. Sources in Display P3
/// (made by libvips from sRGB pixels) and in a profile that moves the channels along, as
/// JPEG, PNG and WebP, under both shrink-on-load rules; each thumbnail's colour is checked
/// against the colour itself and against LittleCMS's conversion of the whole source.
@Suite struct ColourProfileTests {
    let fixtures: Fixtures

    init() throws { fixtures = try Fixtures() }

    /// A flat image of one colour, 64×48 (so a 32-wide thumbnail is a 2× shrink, where the
    /// two shrink-on-load rules differ for JPEG).
    static func flat(_ c: [UInt8]) -> RawImage { RawImage(width: 64, height: 48, filledWith: c) }

    static let containers: [ImageFile.Container] = [.jpeg, .png, .webp]

    func centre(_ path: String, fast: Bool) throws -> [UInt8] {
        let (img, _) = try thumb(path, "w=32&format=png", limits: ImagingLimits(fastShrinkOnLoad: fast))
        #expect(img.width == 32 && img.height == 24)
        return img.pixel(16, 12)
    }

    @Test(arguments: containers, [true, false])
    func aDisplayP3SourceComesOutInSRGB(_ container: ImageFile.Container, fast: Bool) throws {
        let p3 = try fixtures.write("p3.icc", ICCProfileMaker.profile(ICCProfileMaker.displayP3, description: "P3"))
        let bytes = try ImageFile.encode(Self.flat([200, 30, 30]), as: container, profile: .convertFromSRGB(path: p3))
        // The stored pixel is the colour in P3's terms (the figures: 184, 50, 41).
        let stored = try ImageFile.decode(bytes).pixel(32, 24)
        #expect(near(stored, [184, 50, 41], 3), "stored \(stored)")
        let path = try fixtures.write("p3-\(fast).\(container.rawValue)", bytes)
        let out = try centre(path, fast: fast)
        let reference = try ImageFile.decodeToSRGBByLittleCMS(bytes).pixel(32, 24)
        #expect(near(out, reference, 3), "thumbnail \(out), LittleCMS \(reference)")
        #expect(near(out, [200, 30, 30], 4), "thumbnail \(out)")
    }

    @Test(arguments: containers, [true, false])
    func aProfileThatMovesTheChannelsIsApplied(_ container: ImageFile.Container, fast: Bool) throws {
        let rotated = ICCProfileMaker.profile(ICCProfileMaker.rotatedSRGB, description: "rotated sRGB")
        let bytes = try ImageFile.encode(Self.flat([200, 30, 30]), as: container, profile: .tag(rotated))
        let path = try fixtures.write("rot-\(fast).\(container.rawValue)", bytes)
        let out = try centre(path, fast: fast)
        let reference = try ImageFile.decodeToSRGBByLittleCMS(bytes).pixel(32, 24)
        #expect(near(out, reference, 3), "thumbnail \(out), LittleCMS \(reference)")
        #expect(near(out, [30, 200, 30], 4), "thumbnail \(out): the stored red is sRGB's green")
    }

    /// An sRGB profile needs no conversion and is recognised as such, whoever made it;
    /// P3, the channel-moving profile and a damaged one are not taken for sRGB.
    @Test func sRGBProfilesAreRecognised() throws {
        let ours = ICCProfileMaker.profile(ICCProfileMaker.sRGB, description: "sRGB made by the tests")
        let p3 = try fixtures.write("p3.icc", ICCProfileMaker.profile(ICCProfileMaker.displayP3, description: "P3"))
        let srgbFile = try fixtures.write("s.icc", ours)
        // libvips' own sRGB profile, as it embeds it after a conversion to sRGB.
        let viaP3 = try ImageFile.encode(Self.flat([9, 9, 9]), as: .png, profile: .convertFromSRGB(path: p3))
        let back = try ImageFile.encode(
            try ImageFile.decode(viaP3), as: .png, profile: .convertFromSRGB(path: srgbFile))
        let libvips = try #require(try ImageFile.iccProfile(back))
        #expect(ICCProfile.kind(ours) == .sRGB)
        #expect(ICCProfile.kind(libvips) == .sRGB)
        #expect(ICCProfile.kind(ICCProfileMaker.profile(ICCProfileMaker.displayP3, description: "sRGB?")) == .other)
        #expect(ICCProfile.kind(ICCProfileMaker.profile(ICCProfileMaker.rotatedSRGB, description: "x")) == .other)
        #expect(ICCProfile.kind(Array(ours.prefix(200))) == .other)
        #expect(ICCProfile.kind(nil) == .none)
    }

    /// An sRGB-tagged source is not converted: the pixels come through as they are.
    @Test func anSRGBTaggedSourceKeepsItsPixels() throws {
        let ours = ICCProfileMaker.profile(ICCProfileMaker.sRGB, description: "sRGB")
        let bytes = try ImageFile.encode(Self.flat([200, 30, 30]), as: .png, profile: .tag(ours))
        let path = try fixtures.write("srgb.png", bytes)
        #expect(near(try centre(path, fast: true), [200, 30, 30], 1))
    }
}
