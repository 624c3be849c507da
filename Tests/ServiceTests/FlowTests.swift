import AspectClient
import Core
import Foundation
import HTTP
import Hashing
import Synchronization
import Testing

/// The `/thumb` and `/info` flow in process: the key, the result store, 304s, signing,
/// presets, errors and coalescing, with no server, no sockets and no libvips.
@Suite struct FlowTests {
    @Test func missThenHitThen304AndHeadUnderOneKeyForEverySpelling() throws {
        let h = try Harness()
        let target = "/thumb?src=landscape.jpg&w=300&ratio=4:3&mode=fill"
        let first = h.get(target)
        #expect(first.status == 200 && first.headers["X-Cache"] == "MISS", "\(first.text)")
        #expect(first.text.hasPrefix("300x225 jpeg ") && first.headers["Content-Type"] == "image/jpeg", "\(first.text)")
        let second = h.get("/thumb?mode=fill&ratio=4%3A3&w=300&src=landscape.jpg")
        #expect(second.headers["X-Cache"] == "HIT" && second.body == first.body)
        #expect(h.renderer.renders.load(ordering: .relaxed) == 1 && h.results.entries == 2, "the result and its /info")
        let etag = try #require(first.headers["ETag"])
        #expect(etag.count == 66 && etag == second.headers["ETag"])
        #expect(first.headers["Cache-Control"] == "public, max-age=31536000, immutable")
        let notModified = h.get(target, headers: [("If-None-Match", "\"other\", W/\(etag)")])
        #expect(notModified.status == 304 && notModified.body.isEmpty && notModified.headers["ETag"] == etag)
        let head = h.get(target, method: "HEAD")
        #expect(head.status == 200 && head.headers["X-Cache"] == "HIT")
    }

    @Test func aNewVersionOfTheSourceIsANewKey() throws {
        let h = try Harness()
        let before = h.get("/thumb?src=landscape.jpg&w=100")
        try h.sources.put("landscape.jpg", "1600x2400 jpeg")
        let after = h.get("/thumb?src=landscape.jpg&w=100")
        #expect(after.headers["X-Cache"] == "MISS" && after.headers["ETag"] != before.headers["ETag"])
        #expect(before.text.hasPrefix("100x67 ") && after.text.hasPrefix("100x150 "), "\(before.text), \(after.text)")
    }

    /// format=auto varies with Accept: its own entries, and `Vary: Accept`.
    @Test func autoFollowsAcceptInEntriesOfItsOwn() throws {
        let h = try Harness()
        let webp = h.get("/thumb?src=landscape.jpg&w=100", headers: [("Accept", "image/webp,*/*")])
        let jpeg = h.get("/thumb?src=landscape.jpg&w=100")
        let png = h.get("/thumb?src=logo.png&w=100")
        #expect(webp.headers["Content-Type"] == "image/webp" && webp.headers["Vary"] == "Accept")
        #expect(jpeg.headers["Content-Type"] == "image/jpeg" && jpeg.headers["ETag"] != webp.headers["ETag"])
        #expect(png.headers["Content-Type"] == "image/png", "alpha stays PNG")
        #expect(h.get("/thumb?src=landscape.jpg&w=100&format=png").headers["Vary"] == nil)
    }

    /// JPEG XL asked for by name, and by `auto` only with `http.autoJxl` and a client that
    /// lists `image/jxl`: before AVIF, an entry of its own, `Vary: Accept`.
    @Test(arguments: [false, true])
    func jpegXLByNameAndByAutoWhenOn(autoJxl: Bool) throws {
        let h = try Harness {
            $0.http.autoJxl = autoJxl
            $0.http.autoAvif = true
        }
        let named = h.get("/thumb?src=landscape.jpg&w=100&format=jxl")
        #expect(named.headers["Content-Type"] == "image/jxl" && named.headers["Vary"] == nil)
        let safari = [("Accept", "image/jxl,image/avif,image/webp,*/*")]
        let auto = h.get("/thumb?src=landscape.jpg&w=100", headers: safari)
        #expect(auto.headers["Content-Type"] == (autoJxl ? "image/jxl" : "image/avif"))
        #expect(auto.headers["Vary"] == "Accept")
        let chrome = h.get("/thumb?src=landscape.jpg&w=100", headers: [("Accept", "image/avif,image/webp,*/*")])
        #expect(
            chrome.headers["Content-Type"] == "image/avif" && chrome.headers["ETag"] != auto.headers["ETag"] || !autoJxl
        )
    }

    @Test(arguments: [
        ("/thumb?w=100", 400, "bad_param"),
        ("/thumb?src=landscape.jpg&w=0", 400, "bad_param"),
        ("/thumb?src=landscape.jpg&w=100&h=100&ratio=1", 400, "bad_param"),
        ("/thumb?src=nothing.jpg&w=100", 404, "not_found"),
        ("/thumb?src=broken.jpg&w=100", 415, "unsupported_source"),
        ("/thumb?src=landscape.jpg&w=100&preset=hero", 400, "bad_param"),
        ("/nowhere", 404, "not_found"),
    ])
    func errorsCarryTheirStatusAndCode(target: String, status: Int, code: String) throws {
        let h = try Harness()
        try h.sources.put("broken.jpg", "not a picture")
        let r = h.get(target)
        #expect(r.status == status && r.text.contains(#""code": "\#(code)""#), "\(target): \(r.text)")
        #expect(h.results.entries == 0, "an error is not kept")
    }

    @Test func otherMethodsAre405WithAllow() throws {
        let r = try Harness().get("/thumb?src=landscape.jpg&w=100", method: "POST")
        #expect(r.status == 405 && r.headers["Allow"] == "GET, HEAD")
    }

    @Test func withASigningKeyOnlySignedURLsAreServed() throws {
        let key = "a signing key of some length"
        let h = try Harness(signingKey: key)
        let thumb = Thumbnail(src: "landscape.jpg").ratio(4, 3).width(120).mode(.fill)
        let signed = h.get(thumb.path(signingKey: key))
        #expect(signed.status == 200 && signed.text.hasPrefix("120x90 "), "\(signed.text)")
        let unsigned = h.get(thumb.path())
        #expect(unsigned.status == 403 && unsigned.text.contains("sig is required"))
        let tampered = h.get(thumb.path(signingKey: key).replacingOccurrences(of: "w=120", with: "w=121"))
        #expect(tampered.status == 403 && tampered.text.contains("does not match"))
        #expect(h.get(thumb.path(signingKey: key + "x")).status == 403)
        // /info is signed over its own path: a /thumb signature does not open it.
        let infoWithThumbSig = h.get(thumb.path(signingKey: key).replacingOccurrences(of: "/thumb?", with: "/info?"))
        #expect(infoWithThumbSig.status == 403)
        #expect(h.get(thumb.path(signingKey: key, endpoint: "/info")).status == 200)
        #expect(h.get("/healthz").status == 200, "other routes are not signed")
    }

    @Test func presetsExpandAndTheRequestsOwnParametersWin() throws {
        let h = try Harness { c in
            try c.setPresets(["avatar": "w=64&h=64&mode=fill&shape=circle", "card": "w=300&ratio=4:3&mode=fill"])
        }
        let avatar = h.get("/thumb?src=landscape.jpg&preset=avatar")
        #expect(avatar.text.hasPrefix("64x64 png "), "a circle is PNG: \(avatar.text)")
        let spelled = h.get("/thumb?src=landscape.jpg&w=64&h=64&mode=fill&shape=circle")
        #expect(spelled.headers["ETag"] == avatar.headers["ETag"] && spelled.headers["X-Cache"] == "HIT")
        #expect(h.get("/thumb?src=landscape.jpg&preset=card&w=400&dpr=2").text.hasPrefix("800x600 "))
        let info = h.get("/info?src=landscape.jpg&preset=card")
        #expect(info.text.contains(#""output": {"width": 300, "height": 225"#), "\(info.text)")
        let unknown = h.get("/thumb?src=landscape.jpg&preset=hero")
        #expect(unknown.status == 400 && unknown.text.contains("the presets are avatar, card"), "\(unknown.text)")
    }

    @Test func onlyPresetsServesNoOtherVariant() throws {
        let h = try Harness { c in
            try c.setPresets(["avatar": "w=64&h=64&mode=fill"])
            c.security.onlyPresets = true
        }
        #expect(h.get("/thumb?src=landscape.jpg&preset=avatar&dpr=2&format=webp").status == 200)
        for target in [
            "/thumb?src=landscape.jpg&w=100", "/info?src=landscape.jpg&mode=fit", "/thumb?src=landscape.jpg",
        ] {
            let r = h.get(target)
            #expect(r.status == 400 && r.text.contains("presets only"), "\(target): \(r.text)")
        }
    }

    /// /info: described once, then a hit; `output` only when a /thumb parameter is given,
    /// SPEC: Efficiency: a /thumb miss stores its source's /info answer from the same
    /// decode, so /info after it is a hit with no description of its own; a /thumb whose
    /// decode is not of the whole source (a crop) leaves /info to describe.
    @Test func infoAfterThumbIsAHit() throws {
        let h = try Harness()
        #expect(h.get("/thumb?src=landscape.jpg&w=300").headers["X-Cache"] == "MISS")
        let info = h.get("/info?src=landscape.jpg")
        #expect(info.status == 200 && info.headers["X-Cache"] == "HIT", "\(info.text)")
        #expect(info.text.contains(#""width": 2400, "height": 1600"#) && info.text.contains("thumbhash"))
        #expect(h.renderer.descriptions.load(ordering: .relaxed) == 0)
        // /info answers carry a weak ETag: the same facts, made by either decode.
        #expect(info.headers["ETag"]?.hasPrefix("W/\"") == true)
        // One CDN tag per source on both (SPEC: Shared results and purging), on 304s too.
        let tag = "src-" + String(SHA256.hex("landscape.jpg").prefix(16))
        #expect(info.headers["Surrogate-Key"] == tag && info.headers["Cache-Tag"] == tag)
        let thumb = h.get("/thumb?src=landscape.jpg&w=300")
        #expect(thumb.headers["Surrogate-Key"] == tag && thumb.headers["Cache-Tag"] == tag)
        let notModified = h.get(
            "/thumb?src=landscape.jpg&w=300", headers: [("If-None-Match", thumb.headers["ETag"] ?? "")])
        #expect(notModified.status == 304 && notModified.headers["Cache-Tag"] == tag)
        #expect(h.get("/thumb?src=logo.png&w=300").headers["Cache-Tag"] != tag)
        #expect(
            h.get("/info?src=landscape.jpg", headers: [("If-None-Match", info.headers["ETag"] ?? "")]).status == 304)
        // Another page is another picture: /info (of page 1) is not made from it.
        try h.sources.put("scan.tif", "1200x1600 tiff pages=3")
        _ = h.get("/thumb?src=scan.tif&w=100&page=2")
        #expect(h.get("/info?src=scan.tif").headers["X-Cache"] == "MISS")
        // trim changes the source /info describes: not made from it either.
        try h.sources.put("framed.jpg", "800x600 jpeg")
        _ = h.get("/thumb?src=framed.jpg&w=100&trim=10")
        #expect(h.get("/info?src=framed.jpg").headers["X-Cache"] == "MISS")
    }

    /// SPEC: Shared results and purging: POST /purge?src= with the admin token removes
    /// every variant of that source (results and /info answers) and answers how many; a
    /// wrong or missing token is a 401 with WWW-Authenticate, GET a 405, no token configured
    /// a 404; other sources keep theirs, and a purged variant renders again.
    @Test func purgeRemovesEveryVariantOfOneSource() throws {
        let h = try Harness { $0.security.adminToken = "s3cret-admin" }
        for w in [100, 200, 300] { _ = h.get("/thumb?src=landscape.jpg&w=\(w)") }
        _ = h.get("/info?src=landscape.jpg&w=100")
        _ = h.get("/thumb?src=logo.png&w=100")
        let renders = h.renderer.renders.load(ordering: .relaxed)
        let auth = [("Authorization", "Bearer s3cret-admin")]
        #expect(h.get("/purge?src=landscape.jpg", headers: auth, method: "GET").status == 405)
        #expect(h.get("/purge?src=landscape.jpg", headers: auth, method: "GET").headers["Allow"] == "POST")
        for bad in [[], [("Authorization", "Bearer wrong")], [("Authorization", "s3cret-admin")]] {
            let r = h.get("/purge?src=landscape.jpg", headers: bad, method: "POST")
            #expect(r.status == 401 && r.headers["WWW-Authenticate"] == "Bearer", "\(bad)")
        }
        #expect(h.get("/purge?src=../x", headers: auth, method: "POST").status == 403)
        #expect(h.get("/purge?w=1", headers: auth, method: "POST").status == 400)
        // Three results, their /info (made by the first render) and one /info with output.
        let purged = h.get("/purge?src=landscape.jpg", headers: auth, method: "POST")
        #expect(purged.status == 200 && purged.text == "{\"purged\": 5}\n", "\(purged.text)")
        #expect(h.get("/purge?src=landscape.jpg", headers: auth, method: "POST").text == "{\"purged\": 0}\n")
        #expect(h.get("/thumb?src=logo.png&w=100").headers["X-Cache"] == "HIT")
        #expect(h.get("/thumb?src=landscape.jpg&w=200").headers["X-Cache"] == "MISS")
        #expect(h.renderer.renders.load(ordering: .relaxed) == renders + 1)
        let metrics = h.get("/metrics").text
        #expect(metrics.contains("aspect_purges_total 2\n") && metrics.contains("aspect_purged_variants_total 5\n"))
        #expect(try Harness().get("/purge?src=landscape.jpg", headers: auth, method: "POST").status == 404)
    }

    /// and then what /thumb makes.
    @Test func infoIsDescribedOnceAndPlansAsThumbDoes() throws {
        let h = try Harness()
        let plain = h.get("/info?src=landscape.jpg")
        #expect(plain.status == 200 && plain.headers["Content-Type"] == "application/json", "\(plain.text)")
        #expect(plain.text.contains(#""width": 2400, "height": 1600"#) && !plain.text.contains("output"))
        #expect(plain.text.contains(#""frames": 1, "pages": 1, "bytes": "#), "\(plain.text)")
        #expect(h.get("/info?src=landscape.jpg").headers["X-Cache"] == "HIT")
        #expect(h.renderer.descriptions.load(ordering: .relaxed) == 1)
        let planned = h.get("/info?src=landscape.jpg&w=300&ratio=4:3&mode=fill")
        #expect(planned.text.contains(#""output": {"width": 300, "height": 225, "format": "jpeg"}"#), "\(planned.text)")
        #expect(h.get("/thumb?src=landscape.jpg&w=300&ratio=4:3&mode=fill").text.hasPrefix("300x225 jpeg"))
        try h.sources.put("scan.tif", "1200x1600 tiff pages=3")
        #expect(h.get("/info?src=scan.tif").text.contains(#""pages": 3"#))
    }

    /// `page` (SPEC: Source formats): a variant of its own, `page=1` the same as none, and
    /// past the last page a 400 naming the count, from `/thumb` and `/info` alike.
    @Test func pageIsAVariantAndPastTheLastIs400NamingTheCount() throws {
        let h = try Harness()
        try h.sources.put("doc.pdf", "400x300 pdf pages=3")
        let none = h.get("/thumb?src=doc.pdf&w=100")
        let first = h.get("/thumb?src=doc.pdf&w=100&page=1")
        #expect(
            none.status == 200 && first.headers["X-Cache"] == "HIT" && first.headers["ETag"] == none.headers["ETag"])
        let third = h.get("/thumb?src=doc.pdf&w=100&page=3")
        #expect(
            third.status == 200 && third.headers["X-Cache"] == "MISS" && third.headers["ETag"] != none.headers["ETag"])
        for route in ["thumb", "info"] {
            let past = h.get("/\(route)?src=doc.pdf&w=100&page=4")
            #expect(past.status == 400 && past.text.contains("page=4 is past the last page: the source has 3 pages"))
        }
        #expect(h.get("/info?src=doc.pdf&page=2").text.contains(#""pages": 3"#))
        #expect(h.get("/thumb?src=doc.pdf&page=0").text.contains("page must be an integer from 1"))
        #expect(h.get("/thumb?src=landscape.jpg&page=2").text.contains("the source has 1 page\""))
        // A vector is drawn at any size: no-upscaling does not hold it to its 400 points.
        #expect(h.get("/thumb?src=doc.pdf&w=1200").text.hasPrefix("1200x900 "))
        #expect(h.get("/thumb?src=landscape.jpg&w=3000").text.hasPrefix("2400x1600 "))
    }

    /// A video (SPEC: Video): `t` and `frames=N` are variants of their own; the moments are
    /// the default one, `t`, or N spread from `t` to the end; past the end is a 400 naming
    /// the duration; a preview is animated where the format can be, else its first moment.
    @Test func videoMomentsAndPreviews() throws {
        let h = try Harness()
        try h.sources.put("clip.mp4", "1920x1080 mp4 duration=8")
        try h.sources.put("short.mp4", "1920x1080 mp4 duration=1.5")
        #expect(h.get("/thumb?src=clip.mp4&w=320").text == "320x180 jpeg q=0 t=1")
        #expect(h.get("/thumb?src=short.mp4&w=320").text.hasSuffix(" t=0.75"))
        #expect(h.get("/thumb?src=clip.mp4&w=320&t=2.5").text.hasSuffix(" t=2.5"))
        let preview = h.get("/thumb?src=clip.mp4&w=320&t=0&frames=4", headers: [("Accept", "image/webp")])
        #expect(preview.text == "320x180 webp q=0 t=0,2,4,6" && preview.headers["Content-Type"] == "image/webp")
        #expect(h.get("/thumb?src=clip.mp4&w=320&frames=4&format=gif").text.hasSuffix(" t=1,2.75,4.5,6.25"))
        #expect(h.get("/thumb?src=clip.mp4&w=320&frames=4&format=jpeg").text.hasSuffix(" t=1"))
        let past = h.get("/thumb?src=clip.mp4&w=320&t=9")
        #expect(past.status == 400 && past.text.contains("t=9 is past the end: the video is 8 s long"), "\(past.text)")
        #expect(h.get("/thumb?src=clip.mp4&frames=101").text.contains("frames must be 1"))
        #expect(h.get("/thumb?src=landscape.jpg&w=50&frames=3").status == 400)
        let info = h.get("/info?src=clip.mp4")
        #expect(
            info.text.contains(#""pages": 1, "duration": 8, "codec": "h264", "fps": 29.97, "bytes": "#), "\(info.text)")
        // The client reads them.
        let decoded = try JSONDecoder().decode(ImageInfo.self, from: Data(info.body))
        #expect(decoded.source.duration == 8 && decoded.source.codec == "h264" && decoded.source.fps == 29.97)
        // Each spelling of a moment is one entry; a new moment is another.
        let one = h.get("/thumb?src=clip.mp4&w=320&t=2.50")
        #expect(one.headers["X-Cache"] == "HIT")
        #expect(h.get("/thumb?src=clip.mp4&w=320&t=3").headers["X-Cache"] == "MISS")
    }

    /// Client hints (SPEC: Efficiency): off by default; on, Sec-CH-DPR (or DPR) stands in
    /// for an absent dpr and Sec-CH-Width (or Width, over the DPR) for absent w and h, each
    /// variant its own entry; explicit parameters win; answers ask for and vary on them.
    @Test func clientHintsStandInForAbsentParameters() throws {
        let off = try Harness()
        let plain = off.get("/thumb?src=landscape.jpg&ratio=4:3&mode=fill", headers: [("Sec-CH-DPR", "2")])
        #expect(plain.text.hasPrefix("2133x1600 ") && plain.headers["Accept-CH"] == nil, "\(plain.text)")
        let h = try Harness { $0.http.clientHints = true }
        let base = "/thumb?src=landscape.jpg&ratio=4:3&mode=fill"
        let none = h.get(base + "&w=300")
        #expect(none.text.hasPrefix("300x225 ") && none.headers["Accept-CH"] == "Sec-CH-DPR, Sec-CH-Width")
        #expect(none.headers["Vary"] == "Accept, Sec-CH-DPR, Sec-CH-Width, DPR, Width", "\(none.headers)")
        let retina = h.get(base + "&w=300", headers: [("Sec-CH-DPR", "2")])
        #expect(retina.text.hasPrefix("600x450 ") && retina.headers["X-Cache"] == "MISS")
        #expect(h.get(base + "&w=300", headers: [("DPR", "2.0")]).headers["X-Cache"] == "HIT")
        #expect(h.get(base + "&w=300", headers: [("Sec-CH-DPR", "9")]).text.hasPrefix("1200x900 "), "clamped to 4")
        #expect(h.get(base + "&w=300&dpr=1", headers: [("Sec-CH-DPR", "2")]).text.hasPrefix("300x225 "))
        // The width hint is device pixels: 900 at DPR 3 is w=300.
        let wide = h.get(base, headers: [("Sec-CH-Width", "900"), ("Sec-CH-DPR", "3")])
        #expect(wide.text.hasPrefix("900x675 "), "\(wide.text)")
        #expect(h.get(base, headers: [("Width", "640")]).text.hasPrefix("640x480 "))
        #expect(h.get(base + "&h=100", headers: [("Width", "640")]).text.hasPrefix("133x100 "))
        #expect(h.get(base, headers: [("Sec-CH-Width", "junk")]).text.hasPrefix("2133x1600 "))
        #expect(
            h.get("/thumb?src=landscape.jpg&w=300&format=jpeg").headers["Vary"]
                == "Sec-CH-DPR, Sec-CH-Width, DPR, Width")
    }

    /// Save-Data (SPEC: Efficiency): off by default; on, `Save-Data: on` without `q` is the
    /// format's Save-Data quality, in an entry of its own; an explicit q wins; every image
    /// answer varies on Save-Data.
    @Test func saveDataLowersTheQualityWhenNoQIsGiven() throws {
        let off = try Harness()
        #expect(off.get("/thumb?src=landscape.jpg&w=300", headers: [("Save-Data", "on")]).text.hasSuffix(" q=0"))
        let h = try Harness { $0.http.saveData = true }
        let target = "/thumb?src=landscape.jpg&w=300"
        let plain = h.get(target)
        #expect(plain.text == "300x200 jpeg q=0" && plain.headers["Vary"] == "Accept, Save-Data", "\(plain.headers)")
        let saving = h.get(target, headers: [("Save-Data", "on")])
        #expect(saving.text == "300x200 jpeg q=50" && saving.headers["X-Cache"] == "MISS")
        #expect(saving.headers["ETag"] != plain.headers["ETag"])
        #expect(h.get(target, headers: [("Save-Data", "ON ")]).headers["X-Cache"] == "HIT")
        #expect(h.get(target, headers: [("Save-Data", "on"), ("Accept", "image/webp")]).text == "300x200 webp q=50")
        #expect(h.get(target + "&format=avif", headers: [("Save-Data", "on")]).text == "300x200 avif q=35")
        // An explicit q wins, and is the same entry with or without the header.
        let q = h.get(target + "&q=70", headers: [("Save-Data", "on")])
        #expect(q.text == "300x200 jpeg q=70" && q.headers["ETag"] == h.get(target + "&q=70").headers["ETag"])
        #expect(h.get(target + "&format=png", headers: [("Save-Data", "on")]).headers["Vary"] == "Save-Data")
    }

    /// 32 identical requests at once: one render, one entry, 32 identical answers.
    @Test func identicalMissesInFlightRenderOnce() throws {
        let h = try Harness()
        h.renderer.delayMs.store(300, ordering: .relaxed)
        let answers = Mutex<[Answer]>([])
        let group = DispatchGroup()
        for _ in 0..<32 {
            DispatchQueue.global().async(group: group) {
                let a = h.get("/thumb?src=landscape.jpg&w=640&ratio=16:9&mode=fill&format=webp")
                answers.withLock { $0.append(a) }
            }
        }
        group.wait()
        let all = answers.withLock { $0 }
        #expect(all.count == 32 && all.allSatisfy { $0.status == 200 })
        #expect(Set(all.map(\.body)).count == 1)
        #expect(h.renderer.renders.load(ordering: .relaxed) == 1 && h.results.entries == 2, "the result and its /info")
        let metrics = h.get("/metrics").text
        #expect(metrics.contains("aspect_renders_total 1\n"), "\(metrics)")
        let waited =
            Self.value(metrics, "aspect_coalesced_waiters_total") + Self.value(metrics, "aspect_cache_hits_total")
        #expect(waited >= 1, "the other 31 waited for the render or found its result: \(metrics)")
    }

    /// /metrics is Prometheus' text format, every series named, and it counts requests by
    /// route and status, hits, misses and renders as they are answered.
    @Test func metricsParseAsPrometheusTextAndMove() throws {
        let h = try Harness()
        _ = h.get("/thumb?src=landscape.jpg&w=10")
        _ = h.get("/thumb?src=landscape.jpg&w=10")
        _ = h.get("/thumb?src=nothing.jpg&w=10")
        let r = h.get("/metrics")
        #expect(r.headers["Content-Type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        let sample = try Regex(
            #"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="[^"]*",?)*\})? [0-9.eE+\-]+(Inf)?$"#)
        var types: Set<String> = []
        for line in r.text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") { types.insert(String(line.split(separator: " ")[2])) }
            if line.hasPrefix("#") { continue }
            #expect(line.wholeMatch(of: sample) != nil, "not a Prometheus sample: \(line)")
        }
        for name in [
            "aspect_requests_total", "aspect_cache_hits_total", "aspect_cache_misses_total", "aspect_cache_bytes",
            "aspect_cache_entries", "aspect_render_seconds", "aspect_queue_depth", "aspect_open_connections",
            "aspect_coalesced_waiters_total", "aspect_cache_evictions_total", "aspect_connections_refused_total",
            "aspect_accept_paused_total", "aspect_cache_indexing",
        ] {
            #expect(types.contains(name), "\(name) missing")
        }
        let metrics = r.text
        #expect(metrics.contains(#"aspect_requests_total{route="/thumb",status="200"} 2"#), "\(metrics)")
        #expect(metrics.contains(#"aspect_requests_total{route="/thumb",status="404"} 1"#))
        #expect(
            Self.value(metrics, "aspect_cache_hits_total") == 1 && Self.value(metrics, "aspect_cache_misses_total") == 1
        )
        #expect(Self.value(metrics, "aspect_render_seconds_count") == 1)
    }

    /// Results made under another shrink-on-load rule are other entries: the rule flipped
    /// misses with a new ETag, and flipping it back hits what the first made.
    @Test func theShrinkOnLoadRuleIsPartOfTheCacheKey() throws {
        let fast = try Harness { $0.images.fastShrinkOnLoad = true }
        let slow = try Harness(sharingStoresOf: fast) { $0.images.fastShrinkOnLoad = false }
        let fastAgain = try Harness(sharingStoresOf: fast) { $0.images.fastShrinkOnLoad = true }
        let target = "/thumb?src=landscape.jpg&w=200"
        let first = fast.get(target)
        let flipped = slow.get(target)
        let back = fastAgain.get(target)
        #expect(first.headers["X-Cache"] == "MISS" && flipped.headers["X-Cache"] == "MISS")
        #expect(back.headers["X-Cache"] == "HIT" && back.headers["ETag"] == first.headers["ETag"])
        #expect(flipped.headers["ETag"] != first.headers["ETag"])
    }

    /// A remote source: the request waits on a fetch thread, not a worker; requests for
    /// other sizes that queued behind the download use it rather than fetch again.
    @Test func requestsQueuedBehindADownloadUseIt() throws {
        let h = try Harness { $0.sources.concurrency = 1 }
        h.sources.remote.store(true, ordering: .relaxed)
        h.sources.gate.lock()
        let responders = (0..<5).map { _ in CapturingResponder() }
        for (i, r) in responders.enumerated() { h.send("/thumb?src=landscape.jpg&w=\(100 + i)", to: r) }
        h.sources.gate.unlock()
        let answers = responders.map { Answer($0.wait()) }
        #expect(answers.map(\.status) == [200, 200, 200, 200, 200], "\(answers.map(\.text))")
        // Each its own size: what the same request makes from a folder-like source.
        let local = try Harness()
        #expect(answers.map(\.body) == (0..<5).map { local.get("/thumb?src=landscape.jpg&w=\(100 + $0)").body })
        #expect(h.sources.fetches.load(ordering: .relaxed) == 1)
    }

    /// A fetch still queued when its client has gone is dropped: the origin is not asked
    /// for nobody, and the metrics count it.
    @Test func aQueuedFetchWhoseClientLeftIsDropped() throws {
        let h = try Harness { $0.sources.concurrency = 1 }
        h.sources.remote.store(true, ordering: .relaxed)
        h.sources.gate.lock()
        let first = CapturingResponder()
        h.send("/thumb?src=landscape.jpg&w=100", to: first)
        let left = CapturingResponder()
        h.send("/thumb?src=logo.png&w=100", to: left)
        left.gone.store(true, ordering: .relaxed)
        h.sources.gate.unlock()
        #expect(Answer(first.wait()).status == 200)
        // Counted when the fetch thread reaches the dropped job, which may be after `first`
        // is answered.
        var metrics = h.get("/metrics").text
        for _ in 0..<500 where !metrics.contains("aspect_source_fetches_abandoned_total 1\n") {
            usleep(10_000)
            metrics = h.get("/metrics").text
        }
        #expect(metrics.contains("aspect_source_fetches_abandoned_total 1\n"), "\(metrics)")
        #expect(h.sources.fetches.load(ordering: .relaxed) == 1, "logo.png was never fetched")
    }

    static func value(_ metrics: String, _ name: String) -> Int {
        let line = metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
    }
}
