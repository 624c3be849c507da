import Core
import Foundation
import Imaging

/// `aspect samples DIR`: the embedded default's sample images, drawn here (no image is
/// taken from elsewhere): a landscape, an EXIF-rotated portrait, artwork with alpha, a
/// square, an animation, a vector logo, a two-page PDF and a video clip, in the formats a
/// user is likely to have.
enum SampleImages {
    static func run(_ args: [String]) -> Int32 {
        guard args.count == 1, let dir = args.first else {
            Console.error("usage: aspect samples DIR")
            return 2
        }
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let files: [(String, () throws -> [UInt8])] = [
                ("landscape.jpg", { try ImageFile.encode(scene(width: 2400, height: 1600), as: .jpeg, quality: 90) }),
                // Stored on its side with Orientation=6, as a phone held upright writes it.
                (
                    "portrait.jpg",
                    {
                        try ImageFile.encode(
                            rotatedCounterClockwise(scene(width: 1200, height: 1800)), as: .jpeg, quality: 90,
                            orientation: 6)
                    }
                ),
                ("logo.png", { try ImageFile.encode(ring(size: 800), as: .png) }),
                ("square.webp", { try ImageFile.encode(wheel(size: 1000), as: .webp, quality: 90) }),
                // 12 frames of a ball crossing a sky, 80 ms each: an animated source.
                (
                    "bounce.gif",
                    {
                        try ImageFile.encode(
                            bounce(width: 320, height: 240, frames: 12), as: .gif, pageHeight: 240,
                            delays: Array(repeating: 80, count: 12))
                    }
                ),
                // 120 × 90 units: every thumbnail wider than that is drawn, not enlarged.
                ("badge.svg", { Array(badge.utf8) }),
                (
                    "brochure.pdf",
                    {
                        ImageFile.pdf(pages: [
                            ImageFile.Page(width: 420, height: 595, rgb: (32, 84, 140), band: (240, 200, 60)),
                            ImageFile.Page(width: 595, height: 420, rgb: (200, 60, 50), band: (250, 250, 245)),
                        ])
                    }
                ),
            ]
            for (name, make) in files {
                let path = "\(dir)/\(name)"
                if FileManager.default.fileExists(atPath: path) { continue }
                try Data(try make()).write(to: URL(fileURLWithPath: path), options: .atomic)
                print("made \(path)")
            }
            // 4 s of the ball crossing the sky at 12 frames a second, H.264 in MP4, written by
            // FFmpeg's encoder (to a temporary name, then renamed: whole or not at all).
            let clip = "\(dir)/clip.mp4"
            if !FileManager.default.fileExists(atPath: clip) {
                let strip = bounce(width: 320, height: 240, frames: 48)
                let frameBytes = 320 * 240 * 3
                let frames = (0..<48).map { i in
                    RawImage(
                        width: 320, height: 240, bands: 3,
                        pixels: Array(strip.pixels[(i * frameBytes)..<((i + 1) * frameBytes)]))
                }
                let temporary = "\(dir)/.clip.\(getpid()).mp4"
                try ImageFile.writeClip(to: temporary, frames: frames, fps: 12, codec: .h264, keyframeEvery: 12)
                guard rename(temporary, clip) == 0 else {
                    throw ImagingError(.encode, AspectError(.internalError, "cannot write \(clip)"))
                }
                print("made \(clip)")
            }
            return 0
        } catch {
            Console.error("aspect samples: \(error)")
            return 1
        }
    }

    /// A vector badge: a gradient card, a ring and a triangle, no text (a container may
    /// have no fonts).
    static let badge = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 90">
          <defs><linearGradient id="sky" x1="0" y1="0" x2="1" y2="1">
            <stop offset="0" stop-color="#2a7bd6"/><stop offset="1" stop-color="#7a3fc4"/></linearGradient></defs>
          <rect x="2" y="2" width="116" height="86" rx="14" fill="url(#sky)"/>
          <circle cx="42" cy="45" r="22" fill="none" stroke="#ffffff" stroke-width="6"/>
          <path d="M74 66 L92 24 L110 66 Z" fill="#ffd23f" stroke="#ffffff" stroke-width="2"/>
        </svg>
        """

    /// Frames of a ball crossing a sky and falling back, stacked top to bottom.
    static func bounce(width w: Int, height h: Int, frames: Int) -> RawImage {
        var px = [UInt8](repeating: 0, count: w * h * frames * 3)
        let r = Double(h) * 0.12
        for f in 0..<frames {
            let t = Double(f) / Double(frames)
            let cx = r + (Double(w) - 2 * r) * t
            let cy = Double(h) - r - (Double(h) - 2 * r) * 4 * t * (1 - t)
            for y in 0..<h {
                for x in 0..<w {
                    let d = ((Double(x) - cx) * (Double(x) - cx) + (Double(y) - cy) * (Double(y) - cy)).squareRoot()
                    let sky = (60 + 120 * Double(y) / Double(h), 130 + 90 * Double(y) / Double(h), 230.0)
                    let c = d < r ? (235.0, 70.0, 60.0) : sky
                    let i = ((f * h + y) * w + x) * 3
                    px[i] = UInt8(c.0)
                    px[i + 1] = UInt8(c.1)
                    px[i + 2] = UInt8(c.2)
                }
            }
        }
        return RawImage(width: w, height: h * frames, bands: 3, pixels: px)
    }

    /// A sky, a sun and hills.
    static func scene(width w: Int, height h: Int) -> RawImage {
        var px = [UInt8](repeating: 0, count: w * h * 3)
        let sunX = Double(w) * 0.68
        let sunY = Double(h) * 0.3
        let sunR = Double(min(w, h)) * 0.09
        for y in 0..<h {
            let t = Double(y) / Double(h)
            for x in 0..<w {
                let fx = Double(x) / Double(w)
                var c = (40 + 150 * t, 110 + 110 * t, 210 + 40 * t)  // sky, lighter to the horizon
                let d = ((Double(x) - sunX) * (Double(x) - sunX) + (Double(y) - sunY) * (Double(y) - sunY)).squareRoot()
                if d < sunR {
                    c = (255, 214, 90)
                } else if d < sunR * 1.6 {
                    let g = (d - sunR) / (sunR * 0.6)
                    c = (c.0 + (255 - c.0) * (1 - g) * 0.5, c.1 + (230 - c.1) * (1 - g) * 0.5, c.2 * (0.5 + 0.5 * g))
                }
                let far = 0.62 + 0.05 * sin(fx * 9 + 1) + 0.03 * sin(fx * 23)
                let near = 0.76 + 0.07 * sin(fx * 5 + 2) + 0.02 * sin(fx * 31)
                if t > near {
                    c = (40 + 30 * (1 - t), 120 + 40 * (1 - t), 50)
                } else if t > far {
                    c = (70, 140, 90)
                }
                let i = (y * w + x) * 3
                px[i] = UInt8(max(0, min(255, c.0)))
                px[i + 1] = UInt8(max(0, min(255, c.1)))
                px[i + 2] = UInt8(max(0, min(255, c.2)))
            }
        }
        return RawImage(width: w, height: h, bands: 3, pixels: px)
    }

    /// A coloured ring on transparency, with soft edges.
    static func ring(size n: Int) -> RawImage {
        var px = [UInt8](repeating: 0, count: n * n * 4)
        let c = Double(n) / 2
        let outer = Double(n) * 0.45
        let inner = Double(n) * 0.28
        for y in 0..<n {
            for x in 0..<n {
                let dx = Double(x) + 0.5 - c
                let dy = Double(y) + 0.5 - c
                let d = (dx * dx + dy * dy).squareRoot()
                let coverage = max(0, min(1, outer - d + 0.5)) * max(0, min(1, d - inner + 0.5))
                let angle = atan2(dy, dx) / (2 * .pi) + 0.5
                let i = (y * n + x) * 4
                px[i] = UInt8(255 * angle)
                px[i + 1] = UInt8(180 * (1 - angle) + 40)
                px[i + 2] = 200
                px[i + 3] = UInt8(255 * coverage)
            }
        }
        return RawImage(width: n, height: n, bands: 4, pixels: px)
    }

    /// A colour wheel in a square.
    static func wheel(size n: Int) -> RawImage {
        var px = [UInt8](repeating: 0, count: n * n * 3)
        let c = Double(n) / 2
        for y in 0..<n {
            for x in 0..<n {
                let dx = Double(x) - c
                let dy = Double(y) - c
                let hue = (atan2(dy, dx) / (2 * .pi) + 0.5) * 6
                let r = min(1, (dx * dx + dy * dy).squareRoot() / c)
                func channel(_ offset: Double) -> UInt8 {
                    let k = (hue + offset).truncatingRemainder(dividingBy: 6)
                    let v = max(0, min(1, min(k, 4 - k)))
                    return UInt8(255 * (1 - r + r * v))
                }
                let i = (y * n + x) * 3
                px[i] = channel(5)
                px[i + 1] = channel(3)
                px[i + 2] = channel(1)
            }
        }
        return RawImage(width: n, height: n, bands: 3, pixels: px)
    }

    static func rotatedCounterClockwise(_ raw: RawImage) -> RawImage {
        let (w, h, b) = (raw.width, raw.height, raw.bands)
        var out = [UInt8](repeating: 0, count: raw.pixels.count)
        for y in 0..<h {
            for x in 0..<w {
                // (x, y) goes to (y, w − 1 − x) in an h-wide, w-tall image.
                let dst = ((w - 1 - x) * h + y) * b
                let src = (y * w + x) * b
                for k in 0..<b { out[dst + k] = raw.pixels[src + k] }
            }
        }
        return RawImage(width: h, height: w, bands: b, pixels: out)
    }
}
