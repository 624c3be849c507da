import Core
import Foundation
import HTTP
import Imaging
import Origins
import Signing

/// The demo page at `/` (`http.demoPage`): the image root's first images in every mode
/// and shape side by side, and a form that builds a `/thumb` URL and shows the result.
/// Each thumbnail carries the size Core's geometry plans for it, and a script on the page
/// reports, once everything has loaded, what the browser got: the browser test reads it.
enum DemoPage {
    /// At most this many sources are shown.
    static let maxSources = 6

    /// One cell of the grid: a label and the query that makes it.
    static let cells: [(label: String, query: String)] = [
        ("fit 4:3", "w=160&ratio=4:3&mode=fit"),
        ("fill 4:3", "w=160&ratio=4:3&mode=fill"),
        ("pad 4:3", "w=160&ratio=4:3&mode=pad&bg=e8e8e8"),
        ("stretch 4:3", "w=160&ratio=4:3&mode=stretch"),
        ("fill 1:1 smart", "w=120&ratio=1&mode=fill&gravity=smart"),
        ("circle", "w=120&ratio=1&mode=fill&shape=circle&format=png"),
        ("capsule", "w=180&ratio=3:1&mode=fill&shape=capsule&format=png"),
        ("rounded", "w=120&ratio=1&mode=fill&shape=rounded&radius=20&format=png"),
    ]

    static func render(
        root: ImageRoot, thumbnailer: Thumbnailer, limits: RequestLimits, signer: Signer?
    ) -> HTTPResponse {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [])
            .filter { !$0.hasPrefix(".") }.sorted()
        var rows = ""
        var shown: [String] = []
        for name in names where shown.count < maxSources {
            // Only what /thumb would serve: a link out of the root is not even probed.
            guard case .success(let source) = root.confine(name),
                let info = try? thumbnailer.probe(path: source.absolute)
            else { continue }
            shown.append(name)
            rows += "<tr><th>\(html(name))<br><small>\(info.size.width)×\(info.size.height)</small></th>"
            for cell in cells {
                let query = "src=\(Canonical.encode(name))&\(cell.query)"
                guard let request = try? ThumbRequest.parse(query: query, limits: limits),
                    let plan = try? Geometry.plan(source: info.size, request: request, limits: limits)
                else { continue }
                let url = "/thumb?" + signed(query, signer)
                rows +=
                    "<td><img src=\"\(html(url))\" data-expect=\"\(plan.output.width)x\(plan.output.height)\" "
                    + "alt=\"\(html(cell.label))\"><br><small>\(html(cell.label)) → "
                    + "\(plan.output.width)×\(plan.output.height)</small></td>"
            }
            rows += "</tr>\n"
        }
        let header = cells.map { "<th>\(html($0.label))</th>" }.joined()
        let options = shown.map { "<option>\(html($0))</option>" }.joined()
        let note =
            signer == nil
            ? ""
            : "<p><b>Signing is on:</b> the grid is signed by the server; the form's URLs are not, and get 403.</p>"
        let body =
            page
            .replacingOccurrences(of: "{{header}}", with: header)
            .replacingOccurrences(of: "{{rows}}", with: rows)
            .replacingOccurrences(of: "{{options}}", with: options)
            .replacingOccurrences(of: "{{note}}", with: note)
        return .text(200, body, contentType: "text/html; charset=utf-8")
    }

    private static func signed(_ query: String, _ signer: Signer?) -> String {
        guard let signer, let params = try? QueryParameters.decode(query) else { return query }
        return query + "&sig=" + signer.signature(params)
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
        th small, td small { color: #666; } form { margin: 24px 0; } form label { margin-right: 12px; }
        #result { margin-top: 12px; } code { background: #f4f4f4; padding: 2px 4px; }
        </style></head><body>
        <h1>Aspect</h1>
        <p>Every image below is <code>/thumb</code> of a file in the image root: the box is given by
        <code>w</code> and <code>ratio</code>, the mode says how the image meets it. Under each, the size
        the geometry plans.</p>
        {{note}}
        <table><tr><th>source</th>{{header}}</tr>
        {{rows}}</table>
        <h2>Try a URL</h2>
        <form id="form">
        <label>src <select name="src">{{options}}</select></label>
        <label>w <input name="w" value="300" size="4"></label>
        <label>h <input name="h" size="4"></label>
        <label>ratio <input name="ratio" value="4:3" size="5"></label>
        <label>mode <select name="mode"><option>fit</option><option selected>fill</option><option>pad</option><option>stretch</option></select></label>
        <label>gravity <select name="gravity"><option></option><option>center</option><option>north</option><option>south</option><option>east</option><option>west</option><option>smart</option><option>entropy</option></select></label>
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
        // For the browser test: once everything has loaded, what each grid image is.
        window.addEventListener("load", function () {
          var rows = [];
          document.querySelectorAll("img[data-expect]").forEach(function (img) {
            rows.push({ src: img.getAttribute("src"), complete: img.complete,
              natural: img.naturalWidth + "x" + img.naturalHeight, expect: img.getAttribute("data-expect") });
          });
          document.getElementById("report").textContent = JSON.stringify(rows);
        });
        </script>
        </body></html>
        """
}
