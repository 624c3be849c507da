import Foundation

/// Wolt's BlurHash (https://blurha.sh): a placeholder of a few DCT components in linear
/// light, as a base-83 string. The encoder follows the published algorithm; alpha is not
/// part of it (the caller flattens first).
public enum BlurHash {
    /// The hash of an RGB image (8 bits a channel, row by row), with `x` × `y` components
    /// (1 … 9 each); nil for other counts, an empty image, or pixels that are not that many.
    public static func encode(width: Int, height: Int, rgb: [UInt8], x componentsX: Int = 4, y componentsY: Int = 3)
        -> String?
    {
        guard (1...9).contains(componentsX), (1...9).contains(componentsY), width > 0, height > 0,
            rgb.count == width * height * 3
        else { return nil }
        let linear = rgb.map { srgbToLinear($0) }
        let (w, h) = (Double(width), Double(height))
        var components: [(Double, Double, Double)] = []
        var maxAC = 0.0
        for j in 0..<componentsY {
            for i in 0..<componentsX {
                let norm = i == 0 && j == 0 ? 1.0 : 2.0
                var (r, g, b) = (0.0, 0.0, 0.0)
                for y in 0..<height {
                    let cy = cos(Double.pi * Double(j) * Double(y) / h)
                    for x in 0..<width {
                        let basis = norm * cos(Double.pi * Double(i) * Double(x) / w) * cy
                        let k = (y * width + x) * 3
                        r += basis * linear[k]
                        g += basis * linear[k + 1]
                        b += basis * linear[k + 2]
                    }
                }
                r /= w * h
                g /= w * h
                b /= w * h
                components.append((r, g, b))
                if i != 0 || j != 0 { maxAC = max(maxAC, abs(r), abs(g), abs(b)) }
            }
        }
        let dc = components[0]
        let dcValue = (linearToSRGB(dc.0) << 16) + (linearToSRGB(dc.1) << 8) + linearToSRGB(dc.2)
        let quantMax = Int(max(0, min(82, (maxAC * 166 - 0.5).rounded(.down))))
        let acNorm = Double(quantMax + 1) / 166
        func quant(_ v: Double) -> Int { Int(max(0, min(18, (signPow(v / acNorm, 0.5) * 9 + 9.5).rounded(.down)))) }
        var out = base83(componentsX - 1 + (componentsY - 1) * 9, 1) + base83(quantMax, 1) + base83(dcValue, 4)
        for (r, g, b) in components.dropFirst() { out += base83(quant(r) * 19 * 19 + quant(g) * 19 + quant(b), 2) }
        return out
    }

    /// Decodes to RGB (8 bits a channel) of `width` × `height`; nil for a malformed hash.
    public static func decode(_ hash: String, width: Int, height: Int) -> [UInt8]? {
        let chars = Array(hash.utf8)
        guard chars.count >= 6, let size = value(chars[0..<1]) else { return nil }
        let (nx, ny) = (size % 9 + 1, size / 9 + 1)
        guard chars.count == 4 + 2 * nx * ny, let quantMax = value(chars[1..<2]), let dc = value(chars[2..<6]) else {
            return nil
        }
        let maxAC = Double(quantMax + 1) / 166
        var colours: [(Double, Double, Double)] = [
            (srgbToLinear(UInt8(dc >> 16)), srgbToLinear(UInt8((dc >> 8) & 255)), srgbToLinear(UInt8(dc & 255)))
        ]
        for k in 1..<(nx * ny) {
            guard let v = value(chars[(4 + 2 * k)..<(6 + 2 * k)]) else { return nil }
            func unq(_ q: Int) -> Double { signPow((Double(q) - 9) / 9, 2) * maxAC }
            colours.append((unq(v / (19 * 19)), unq((v / 19) % 19), unq(v % 19)))
        }
        var out = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                var (r, g, b) = (0.0, 0.0, 0.0)
                for j in 0..<ny {
                    for i in 0..<nx {
                        let basis =
                            cos(Double.pi * Double(x) * Double(i) / Double(width))
                            * cos(Double.pi * Double(y) * Double(j) / Double(height))
                        let c = colours[i + j * nx]
                        r += c.0 * basis
                        g += c.1 * basis
                        b += c.2 * basis
                    }
                }
                let k = (y * width + x) * 3
                out[k] = UInt8(linearToSRGB(r))
                out[k + 1] = UInt8(linearToSRGB(g))
                out[k + 2] = UInt8(linearToSRGB(b))
            }
        }
        return out
    }

    static let alphabet = Array(
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~".utf8)

    static func base83(_ value: Int, _ length: Int) -> String {
        var out = ""
        var divisor = 1
        for _ in 1..<max(1, length) { divisor *= 83 }
        for _ in 0..<length {
            out.unicodeScalars.append(Unicode.Scalar(alphabet[(value / divisor) % 83]))
            divisor /= 83
        }
        return out
    }

    static func value(_ chars: ArraySlice<UInt8>) -> Int? {
        var v = 0
        for c in chars {
            guard let d = alphabet.firstIndex(of: c) else { return nil }
            v = v * 83 + d
        }
        return v
    }

    static func srgbToLinear(_ v: UInt8) -> Double {
        let x = Double(v) / 255
        return x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4)
    }

    static func linearToSRGB(_ v: Double) -> Int {
        let x = max(0, min(1, v))
        return x <= 0.0031308 ? Int(x * 12.92 * 255 + 0.5) : Int((1.055 * pow(x, 1 / 2.4) - 0.055) * 255 + 0.5)
    }

    static func signPow(_ v: Double, _ e: Double) -> Double { copysign(pow(abs(v), e), v) }
}
