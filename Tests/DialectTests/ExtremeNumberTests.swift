import Testing

@testable import Core
@testable import Imgproxy
@testable import Thumbor

/// Every numeric slot of the three URL forms fed extreme numbers, through the service's
/// whole path before a worker: parse, canonical form, the dialect settled on the source,
/// and the plan, on sources from 1×1 to past any limit (issue 50: `c:200:1e308` trapped
/// converting a Double to an Int and took the whole service down). The property: no trap
/// (a trap would end this test process), every refusal a client's error (never
/// `internal`), a refusal while parsing names the option, and every plan made has sides
/// of at least 1 and at most `limits.maxDimension`.
@Suite struct ExtremeNumberTests {
    /// 1e308, ±2^63, 2^32, nan, ±inf, -0, 1e-308, -1, beyond Int, hex floats, denormals.
    static let extremes = [
        "1e308", "-1e308", "9223372036854775807", "-9223372036854775808", "9223372036854774784", "4294967296",
        "nan", "inf", "-inf", "-0", "1e-308", "5e-324", "-1", "99999999999999999999999", "0x1p70", "0", "1",
        "1000000", "1000001", "65535", "0.5", "2147483647",
    ]

    static let sources: [SourceDescription] = [
        Size(width: 1, height: 1), Size(width: 640, height: 427), Size(width: 65535, height: 1),
        Size(width: 1, height: 65535), Size(width: 22000, height: 1000), Size(width: 100_000, height: 100_000),
    ].flatMap { size in
        ["jpeg", "gif"].map { SourceDescription(size: size, hasAlpha: false, format: $0, bytes: 1000) }
    }

    static var limits: RequestLimits {
        var l = RequestLimits()
        l.watermarks["wm"] = Watermark(src: "wm.png", size: Size(width: 100, height: 50), digest: "x")
        return l
    }

    /// `/thumb`'s query, a `#` where the number goes; the option's name first.
    static let native: [(String, String)] = [
        ("w", "w=#"), ("h", "h=#"), ("ratio", "w=100&ratio=#"), ("ratio", "ratio=#:3"), ("ratio", "ratio=4:#"),
        ("fx", "w=100&h=100&mode=fill&gravity=focus&fx=#"), ("fy", "w=100&h=100&mode=fill&gravity=focus&fy=#"),
        ("dpr", "w=100&dpr=#"), ("radius", "w=100&shape=rounded&radius=#"), ("q", "q=#"),
        ("crop", "crop=#,0,1,1"), ("crop", "crop=0,#,1,1"), ("crop", "crop=0,0,#,1"), ("crop", "crop=0,0,1,#"),
        ("rotate", "rotate=#"), ("blur", "blur=#"), ("sharpen", "sharpen=#"), ("pixelate", "pixelate=#"),
        ("trim", "trim=#"), ("maxbytes", "maxbytes=#"), ("padding", "padding=#"), ("padding", "padding=1,#,1,1"),
        ("frames", "frames=#"), ("page", "page=#"), ("t", "t=#"), ("w", "w=#&h=#&mode=fill&upscale=1"),
    ]

    /// imgproxy's options (between `/insecure/` and `/plain/a.jpg`); the option's name first.
    static let imgproxy: [(String, String)] = [
        ("rs", "rs:fit:#:100"), ("rs", "rs:fit:100:#"), ("rs", "rs:fill:100:100:1:1:ce:#:0"),
        ("rs", "rs:fill:100:100:1:1:ce:0:#"), ("s", "s:#:100"), ("w", "w:#"), ("h", "h:#"), ("mw", "mw:#"),
        ("mh", "mh:#"), ("z", "w:100/z:#"), ("z", "w:100/z:1:#"), ("z", "el:1/z:#"), ("z", "el:1/z:#/pd:4096"),
        ("dpr", "w:100/dpr:#"), ("ex", "s:100:100/ex:1:ce:#:0"), ("exar", "s:100:100/exar:1:ce:0:#"),
        ("g", "rs:fill:100:100/g:ce:#:0"), ("g", "rs:fill:100:100/g:so:0:#"), ("g", "rs:fill:100:100/g:ea:#"),
        ("g", "g:fp:#:0.5"), ("c", "c:#:100"), ("c", "c:100:#"), ("c", "c:#:#:ce"), ("c", "c:10:10:ce:#:0"),
        ("t", "t:#"), ("pd", "pd:#"), ("pd", "pd:1:#:1:1"), ("rot", "rot:#"), ("bg", "bg:#:0:0"), ("bl", "bl:#"),
        ("sh", "sh:#"), ("pix", "pix:#"), ("wm", "wm:#:ce:0:0:0.5"), ("wm", "wm:1:ce:#:0"),
        ("wm", "wm:1:ce:0:#"), ("wm", "wm:1:ce:0:0:#"), ("q", "q:#"), ("fq", "fq:jpg:#"), ("mb", "mb:#"),
        ("pg", "pg:#"), ("vts", "vts:#"), ("exp", "exp:#"), ("mw", "rs:fit:100:100/mw:#"),
        ("mh", "el:1/rs:fill:100:100/mw:#/mh:#"),
    ]

    /// thumbor's paths; the part or filter named first.
    static let thumbor: [(String, String)] = [
        ("size", "/unsafe/#x100/a.jpg"), ("size", "/unsafe/100x#/a.jpg"), ("size", "/unsafe/-#x-#/a.jpg"),
        ("crop", "/unsafe/#x0:100x100/a.jpg"), ("crop", "/unsafe/0x0:#x#/300x200/a.jpg"),
        ("trim", "/unsafe/trim:top-left:#/a.jpg"), ("quality", "/unsafe/filters:quality(#)/a.jpg"),
        ("blur", "/unsafe/filters:blur(#)/a.jpg"), ("blur", "/unsafe/filters:blur(2,#)/a.jpg"),
        ("max_bytes", "/unsafe/filters:max_bytes(#)/a.jpg"), ("proportion", "/unsafe/filters:proportion(#)/a.jpg"),
        ("rotate", "/unsafe/filters:rotate(#)/a.jpg"), ("round_corner", "/unsafe/filters:round_corner(#,0,0,0)/a.jpg"),
        ("round_corner", "/unsafe/filters:round_corner(10,#,0,0)/a.jpg"),
        ("focal", "/unsafe/300x100/filters:focal(#x0:10x10)/a.jpg"),
        ("watermark", "/unsafe/filters:watermark(wm,#,0,50)/a.jpg"),
        ("watermark", "/unsafe/filters:watermark(wm,0,#,50)/a.jpg"),
        ("watermark", "/unsafe/filters:watermark(wm,#p,0,50)/a.jpg"),
        ("watermark", "/unsafe/filters:watermark(wm,0,0,#)/a.jpg"),
        ("watermark", "/unsafe/filters:watermark(wm,0,0,50,#,none)/a.jpg"),
        ("extract_focal", "/unsafe/300x100/filters:extract_focal()/host/unsafe/#x#:10x20/a.jpg"),
        ("fill", "/unsafe/300x300/fit-in/filters:fill(#)/a.jpg"),
    ]

    enum Form: String, CaseIterable { case native, imgproxy, thumbor }

    static func parse(_ form: Form, _ text: String) throws(AspectError) -> ThumbRequest {
        switch form {
        case .native: try ThumbRequest.parse(query: "src=a.jpg&" + text, limits: limits)
        case .imgproxy:
            try ImgproxyURL.parse(
                path: "/insecure/\(text)/plain/a.jpg", settings: .init(root: .folder("/img"), watermark: "wm"),
                limits: limits, now: 0
            ).request
        case .thumbor:
            try ThumborURL.parse(
                Substring(text), settings: .init(root: .folder("/img"), watermarks: ["wm"]), limits: limits
            ).request
        }
    }

    /// Parse, canonical form, settle, plan: the refusal, or nil when planned (and checked).
    static func run(_ form: Form, _ text: String, on source: SourceDescription) -> (AspectError, parsing: Bool)? {
        let request: ThumbRequest
        do throws(AspectError) {
            request = try parse(form, text)
        } catch {
            return (error, true)
        }
        _ = request.canonical
        do throws(AspectError) {
            let settled =
                switch form {
                case .native: request
                case .imgproxy: ImgproxyURL.settle(request, source: source, limits: limits)
                case .thumbor: ThumborURL.settle(request, source: source, limits: limits)
                }
            _ = settled.canonical
            let order = try RenderOrder.plan(settled, source: source, limits: limits, accept: nil)
            let out = order.plan.output
            #expect(
                out.width >= 1 && out.height >= 1 && out.width <= limits.maxDimension
                    && out.height <= limits.maxDimension, "\(form) \(text) on \(source.size): \(out)")
            return nil
        } catch {
            return (error, false)
        }
    }

    @Test(arguments: Form.allCases)
    func extremeNumbersInEverySlot(form: Form) {
        let slots =
            switch form {
            case .native: Self.native
            case .imgproxy: Self.imgproxy
            case .thumbor: Self.thumbor
            }
        var (planned, refused) = (0, 0)
        var problems: [String] = []
        for (name, template) in slots {
            for value in Self.extremes {
                let text = template.replacingOccurrences(of: "#", with: value)
                for source in Self.sources {
                    guard let (error, parsing) = Self.run(form, text, on: source) else {
                        planned += 1
                        continue
                    }
                    refused += 1
                    if error.code == .internalError { problems.append("\(text) on \(source.size): \(error)") }
                    // thumbor's numbers are 1 to 6 digits: a longer one is no part of the
                    // grammar, and the segment is read as the image's path.
                    if parsing, form != .thumbor || error.code == .badParam,
                        !error.message.contains(name), !error.message.contains(value)
                    {
                        problems.append("\(text): \(error.message) names neither \(name) nor \(value)")
                    }
                }
            }
        }
        #expect(problems.isEmpty, "\(problems.count): \(problems.prefix(20).joined(separator: "\n"))")
        // Both sides are exercised: the slots take sane values too.
        #expect(planned > 100 && refused > 100, "planned \(planned), refused \(refused)")
    }

    /// The URLs a user found killing the service: each is a 400 naming the crop.
    @Test(arguments: [
        "c:200:99999999999999999999999:ce", "c:1e308:1e308", "c:9223372036854775807:100", "c:200:1e308:ce",
    ])
    func theCropsThatKilledTheService(options: String) {
        let source = SourceDescription(size: Size(width: 1920, height: 1280), hasAlpha: false, format: "jpeg", bytes: 1)
        let refused = Self.run(.imgproxy, options, on: source)
        #expect(
            refused?.0.code == .badParam && refused?.0.message.contains("c") == true, "\(String(describing: refused))")
    }
}
