import Core
import Foundation
import HTTP
import Imaging
import Signing
import SourceStores

/// The demo page at `/` (`http.demoPage`): the image root's first images in every mode
/// and shape side by side, and a form that builds a `/thumb` URL and shows the result.
/// Each thumbnail carries the size Core's geometry plans for it, and a script on the page
/// reports, once everything has loaded, what the browser got: the browser test reads it.
enum DemoPage {
    /// At most this many sources are shown.
    static let maxSources = 8

    /// One cell of the grid: a label and the query that makes it.
    typealias Cell = (label: String, query: String)

    /// The modes, each on the same 4:3 box; the first table, after the placeholder.
    static let modeCells: [Cell] = [
        ("fit 4:3", "w=160&ratio=4:3&mode=fit"),
        ("fill 4:3", "w=160&ratio=4:3&mode=fill"),
        ("pad 4:3", "w=160&ratio=4:3&mode=pad&bg=e8e8e8"),
        ("stretch 4:3", "w=160&ratio=4:3&mode=stretch"),
    ]

    /// A video's hover preview: six frames from 1 s to the end, as an animation.
    static let videoPreviewCell: Cell = ("video preview", "w=160&ratio=4:3&mode=fill&frames=6")

    /// Smart and face cropping and the shapes; the second table, with the presets.
    static let shapeCells: [Cell] = [
        ("fill 1:1 smart", "w=120&ratio=1&mode=fill&gravity=smart"),
        // Beside smart: on a photo of people, the faces kept (without one, smart's cut).
        ("fill 1:1 face", "w=120&ratio=1&mode=fill&gravity=face"),
        ("circle", "w=120&ratio=1&mode=fill&shape=circle&format=png"),
        ("capsule", "w=180&ratio=3:1&mode=fill&shape=capsule&format=png"),
        ("rounded", "w=120&ratio=1&mode=fill&shape=rounded&radius=20&format=png"),
    ]

    /// At most this many of the configured presets get a column.
    static let maxPresets = 2

    static func render(
        root: FolderSource, thumbnailer: Thumbnailer, limits: RequestLimits, signer: Signer?,
        presets: Presets = Presets()
    ) -> HTTPResponse {
        // The configured presets, each a column of its own (`preset=NAME`).
        let presetCells: [Cell] = presets.byName.keys.sorted().prefix(maxPresets).map {
            ("preset \($0)", "preset=\($0)")
        }
        // Two tables rather than one wide one, so the page fits a 1280-pixel window.
        var modeRows = ""
        var shapeRows = ""
        var shown: [String] = []
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [])
            .filter { !$0.hasPrefix(".") }.sorted()
        for name in names where shown.count < maxSources {
            // Only what /thumb would serve: a link out of the root is not even probed.
            guard case .success(let source) = root.confine(name),
                let info = try? thumbnailer.probe(path: source.absolute)
            else { continue }
            shown.append(name)
            let head = "<tr><th>\(html(name))<br><small>\(info.size.width)×\(info.size.height)</small></th>"
            // The placeholder, drawn by the page from /info's ThumbHash at /info's ratio.
            let infoURL = "/info?" + signed("src=\(PercentEncoding.encode(name))", signer, path: "/info")
            // A video's hover preview (frames=N), in a column of its own.
            let preview =
                info.video == nil
                ? "<td></td>" : thumbnails(name, info.description, [videoPreviewCell], limits, signer, presets)
            modeRows +=
                head + "<td><canvas class=\"ph\" data-info=\"\(html(infoURL))\"></canvas><br><small>"
                + "<a class=\"info\" href=\"\(html(infoURL))\">/info</a></small></td>"
                + thumbnails(name, info.description, modeCells, limits, signer, presets) + preview + "</tr>\n"
            shapeRows +=
                head + thumbnails(name, info.description, shapeCells + presetCells, limits, signer, presets)
                + "</tr>\n"
        }
        let modeHeader =
            "<th>placeholder</th>" + (modeCells + [videoPreviewCell]).map { "<th>\(html($0.label))</th>" }.joined()
        let shapeHeader = (shapeCells + presetCells).map { "<th>\(html($0.label))</th>" }.joined()
        let options = shown.map { "<option>\(html($0))</option>" }.joined()
        let note =
            signer == nil
            ? ""
            : "<p><b>Signing is on:</b> the grid is signed by the server; the form's URLs are not, and get 403.</p>"
        let body =
            page
            .replacingOccurrences(of: "{{modeHeader}}", with: modeHeader)
            .replacingOccurrences(of: "{{modeRows}}", with: modeRows)
            .replacingOccurrences(of: "{{shapeHeader}}", with: shapeHeader)
            .replacingOccurrences(of: "{{shapeRows}}", with: shapeRows)
            .replacingOccurrences(of: "{{options}}", with: options)
            .replacingOccurrences(of: "{{note}}", with: note)
        return .text(200, body, contentType: "text/html; charset=utf-8")
    }

    /// A row's thumbnails: one cell per query, each carrying the size Core plans for it.
    private static func thumbnails(
        _ name: String, _ source: SourceDescription, _ cells: [Cell], _ limits: RequestLimits, _ signer: Signer?,
        _ presets: Presets
    ) -> String {
        var row = ""
        for cell in cells {
            let query = "src=\(PercentEncoding.encode(name))&\(cell.query)"
            guard let params = try? QueryParameters.decode(query),
                let expanded = try? presets.expand(params, onlyPresets: false),
                let request = try? ThumbRequest.parse(expanded, limits: limits),
                let plan = try? RenderOrder.plan(request, source: source, limits: limits, accept: nil).plan
            else { continue }
            let url = "/thumb?" + signed(query, signer)
            row +=
                "<td><img src=\"\(html(url))\" data-expect=\"\(plan.output.width)x\(plan.output.height)\" "
                + "alt=\"\(html(cell.label))\"><br><small>\(html(cell.label)) → "
                + "\(plan.output.width)×\(plan.output.height)</small></td>"
        }
        return row
    }

    private static func signed(_ query: String, _ signer: Signer?, path: String = "/thumb") -> String {
        guard let signer, let params = try? QueryParameters.decode(query) else { return query }
        return query + "&sig=" + signer.signature(path: path, params)
    }

    static func html(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    private static let page = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>Aspect</title>
        <style>
        body { font: 14px system-ui, sans-serif; margin: 24px; color: #222; }
        table { border-collapse: collapse; } th, td { padding: 6px 10px; text-align: center; vertical-align: middle; }
        td img { background: repeating-conic-gradient(#ddd 0 25%, #fff 0 50%) 0 0 / 16px 16px; }
        th small, td small { color: #666; } canvas.ph { width: 120px; display: inline-block; }
        #infojson { background: #f4f4f4; padding: 8px; white-space: pre-wrap; max-width: 1180px; } form { margin: 24px 0; } form label { margin-right: 12px; }
        #result { margin-top: 12px; } code { background: #f4f4f4; padding: 2px 4px; }
        </style></head><body>
        <h1>Aspect</h1>
        <p>Every image below is <code>/thumb</code> of a file in the image root: the box is given by
        <code>w</code> and <code>ratio</code>, the mode says how the image meets it. Under each, the size
        the geometry plans.</p>
        {{note}}
        <h2>Modes: a 4:3 box, 160 wide</h2>
        <table><tr><th>source</th>{{modeHeader}}</tr>
        {{modeRows}}</table>
        <h2>Smart crop, shapes and presets</h2>
        <table><tr><th>source</th>{{shapeHeader}}</tr>
        {{shapeRows}}</table>
        <pre id="infojson" hidden></pre>
        <h2>Try a URL</h2>
        <form id="form">
        <label>src <select name="src">{{options}}</select></label>
        <label>w <input name="w" value="300" size="4"></label>
        <label>h <input name="h" size="4"></label>
        <label>ratio <input name="ratio" value="4:3" size="5"></label>
        <label>mode <select name="mode"><option>fit</option><option selected>fill</option><option>pad</option><option>stretch</option></select></label>
        <label>gravity <select name="gravity"><option></option><option>center</option><option>north</option><option>south</option><option>east</option><option>west</option><option>smart</option><option>entropy</option><option>face</option></select></label>
        <label>shape <select name="shape"><option></option><option>circle</option><option>capsule</option><option>rounded</option></select></label>
        <label>format <select name="format"><option></option><option>jpeg</option><option>png</option><option>webp</option><option>avif</option></select></label>
        <label>dpr <input name="dpr" size="3"></label>
        <button>Show</button>
        </form>
        <div id="result"></div>
        <pre id="report" hidden></pre>
        <script>
        document.getElementById("form").addEventListener("submit", function (e) {
          e.preventDefault();
          var params = new URLSearchParams();
          new FormData(e.target).forEach(function (v, k) { if (v !== "") params.append(k, v); });
          var url = "/thumb?" + params.toString();
          var out = document.getElementById("result");
          out.innerHTML = "";
          var link = document.createElement("p");
          link.innerHTML = "<code></code>";
          link.firstChild.textContent = url;
          var img = new Image();
          img.onload = function () { link.appendChild(document.createTextNode(" → " + img.naturalWidth + "×" + img.naturalHeight)); };
          img.onerror = function () {
            fetch(url).then(function (r) { return r.text(); }).then(function (t) { link.appendChild(document.createTextNode(" → " + t)); });
          };
          img.src = url;
          out.appendChild(link);
          out.appendChild(img);
        });
        // ThumbHash to RGBA, after Evan Wallace's published decoder.
        function thumbHashToRGBA(hash) {
          var h24 = hash[0] | (hash[1] << 8) | (hash[2] << 16), h16 = hash[3] | (hash[4] << 8);
          var lDC = (h24 & 63) / 63, pDC = ((h24 >> 6) & 63) / 31.5 - 1, qDC = ((h24 >> 12) & 63) / 31.5 - 1;
          var lScale = ((h24 >> 18) & 31) / 31, alpha = h24 >> 23;
          var pScale = ((h16 >> 3) & 63) / 63, qScale = ((h16 >> 9) & 63) / 63, landscape = h16 >> 15;
          var lx = Math.max(3, landscape ? (alpha ? 5 : 7) : h16 & 7);
          var ly = Math.max(3, landscape ? h16 & 7 : (alpha ? 5 : 7));
          var aDC = alpha ? (hash[5] & 15) / 15 : 1, aScale = (hash[5] >> 4) / 15;
          var start = alpha ? 6 : 5, index = 0;
          function channel(nx, ny, scale) {
            var ac = [];
            for (var cy = 0; cy < ny; cy++)
              for (var cx = cy ? 0 : 1; cx * ny < nx * (ny - cy); cx++, index++)
                ac.push((((hash[start + (index >> 1)] >> ((index & 1) << 2)) & 15) / 7.5 - 1) * scale);
            return ac;
          }
          var lAC = channel(lx, ly, lScale), pAC = channel(3, 3, pScale * 1.25), qAC = channel(3, 3, qScale * 1.25);
          var aAC = alpha ? channel(5, 5, aScale) : [];
          var lxr = landscape ? (alpha ? 5 : 7) : h16 & 7, lyr = landscape ? h16 & 7 : (alpha ? 5 : 7);
          var ratio = lxr / lyr;
          var w = Math.round(ratio > 1 ? 32 : 32 * ratio), h = Math.round(ratio > 1 ? 32 / ratio : 32);
          var rgba = new Uint8ClampedArray(w * h * 4), fx = [], fy = [];
          for (var y = 0, i = 0; y < h; y++) {
            for (var x = 0; x < w; x++, i += 4) {
              var l = lDC, p = pDC, q = qDC, a = aDC, cx, cy, j, n;
              for (cx = 0, n = Math.max(lx, alpha ? 5 : 3); cx < n; cx++) fx[cx] = Math.cos(Math.PI / w * (x + 0.5) * cx);
              for (cy = 0, n = Math.max(ly, alpha ? 5 : 3); cy < n; cy++) fy[cy] = Math.cos(Math.PI / h * (y + 0.5) * cy);
              for (cy = 0, j = 0; cy < ly; cy++)
                for (cx = cy ? 0 : 1; cx * ly < lx * (ly - cy); cx++, j++) l += lAC[j] * fx[cx] * fy[cy] * 2;
              for (cy = 0, j = 0; cy < 3; cy++)
                for (cx = cy ? 0 : 1; cx < 3 - cy; cx++, j++) { p += pAC[j] * fx[cx] * fy[cy] * 2; q += qAC[j] * fx[cx] * fy[cy] * 2; }
              if (alpha)
                for (cy = 0, j = 0; cy < 5; cy++)
                  for (cx = cy ? 0 : 1; cx < 5 - cy; cx++, j++) a += aAC[j] * fx[cx] * fy[cy] * 2;
              var b = l - 2 / 3 * p, r = (3 * l - b + q) / 2, g = r - q;
              rgba[i] = 255 * r; rgba[i + 1] = 255 * g; rgba[i + 2] = 255 * b; rgba[i + 3] = 255 * a;
            }
          }
          return { w: w, h: h, rgba: rgba };
        }
        // Each placeholder: /info's ThumbHash decoded into the canvas, shown at /info's ratio.
        var placeholders = Array.prototype.map.call(document.querySelectorAll("canvas.ph"), function (canvas) {
          return fetch(canvas.getAttribute("data-info")).then(function (r) { return r.json(); }).then(function (info) {
            var bytes = Uint8Array.from(atob(info.thumbhash), function (c) { return c.charCodeAt(0); });
            var img = thumbHashToRGBA(bytes);
            canvas.width = img.w; canvas.height = img.h;
            canvas.getContext("2d").putImageData(new ImageData(img.rgba, img.w, img.h), 0, 0);
            canvas.style.height = (120 / info.ratio) + "px";
            return { info: canvas.getAttribute("data-info"), ratio: info.ratio,
              shown: canvas.clientWidth / canvas.clientHeight, drawn: img.w * img.h };
          });
        });
        document.querySelectorAll("a.info").forEach(function (a) {
          a.addEventListener("click", function (e) {
            e.preventDefault();
            fetch(a.getAttribute("href")).then(function (r) { return r.text(); }).then(function (t) {
              var pre = document.getElementById("infojson");
              pre.textContent = a.getAttribute("href") + "\\n" + t;
              pre.hidden = false;
            });
          });
        });
        // For the browser test: once everything has loaded, what each grid image is, each
        // placeholder, and whether the page is wider than the window.
        var loaded = new Promise(function (resolve) { window.addEventListener("load", resolve); });
        Promise.all([loaded, Promise.all(placeholders)]).then(function (done) {
          var rows = [];
          document.querySelectorAll("img[data-expect]").forEach(function (img) {
            rows.push({ src: img.getAttribute("src"), complete: img.complete,
              natural: img.naturalWidth + "x" + img.naturalHeight, expect: img.getAttribute("data-expect") });
          });
          document.getElementById("report").textContent = JSON.stringify({ images: rows, placeholders: done[1],
            innerWidth: window.innerWidth, scrollWidth: document.documentElement.scrollWidth });
        });
        </script>
        </body></html>
        """
}
