import Core
import Foundation
import HTTP
import Signing
import Stores

// `GET /storyboard.vtt` (SPEC: Video, "Storyboards"): the WebVTT index of a video's
// storyboard, each tile's time range and its place on its sheet's URL.
extension ServiceHandler {
    /// The index: the video's header read on a worker, the tiles planned as `/thumb`
    /// plans them (a bad grid, a still source or `t` past the end: the same 400), then a
    /// cue a tile pointing at `thumb?…&sheet=K#xywh=x,y,w,h`, the request's own parameters
    /// with the sheet (signed where signing is on). Relative to the index's own URL, so it
    /// holds behind a path prefix too.
    func storyboardIndex(_ known: CheckedRequest, _ identity: SourceIdentity) -> Route {
        let (sources, renderer, limits, signer, maxAge) = (
            sources, renderer, limits, signer, config.http.maxAgeSeconds
        )
        return .work {
            do throws(ServiceFailure) {
                let file = try sources.open(identity).get()
                let header = try renderer.header(file, reading: known.parsed.reading)
                let text = try Self.webVTT(known, header: header, limits: limits, signer: signer)
                var response = HTTPResponse.text(200, text, contentType: "text/vtt; charset=utf-8")
                response.headers.append("Cache-Control", "public, max-age=\(maxAge)")
                response.headers.append("Surrogate-Key", Self.sourceTag(known.parsed.src))
                return response
            } catch {
                return Self.error(error)
            }
        }
    }

    static func webVTT(_ known: CheckedRequest, header: SourceDescription, limits: RequestLimits, signer: Signer?)
        throws(ServiceFailure) -> String
    {
        let request = known.parsed
        let plan: RenderOrder
        let board: Storyboard
        do throws(AspectError) {
            plan = try RenderOrder.plan(request, source: header, limits: limits, accept: known.accept)
            guard let grid = request.tiles, let duration = header.duration else {
                throw AspectError(.badParam, "storyboard.vtt indexes a video's storyboard: give tiles=COLSxROWS")
            }
            board = try Storyboard(request, grid: grid, duration: duration)
        } catch {
            throw ServiceFailure(error, stage: "header")
        }
        let sent: QueryParameters
        do throws(AspectError) {
            sent = try QueryParameters.decode(known.request.query)
        } catch {
            throw ServiceFailure(error, stage: "header")
        }
        var lines = ["WEBVTT", ""]
        var urls: [Int: String] = [:]
        for cue in board.cues(tile: plan.plan.output) {
            let url =
                urls[cue.sheet]
                ?? {
                    var params = QueryParameters(pairs: sent.pairs.filter { $0.name != "sig" && $0.name != "sheet" })
                    params.pairs.append(("sheet", "\(cue.sheet)"))
                    var query = params.canonical()
                    if let signer { query += "&sig=" + signer.signature(path: "/thumb", params) }
                    return "thumb?" + query
                }()
            urls[cue.sheet] = url
            lines += [
                "\(timestamp(cue.start)) --> \(timestamp(cue.end))",
                "\(url)#xywh=\(cue.x),\(cue.y),\(cue.width),\(cue.height)", "",
            ]
        }
        return lines.joined(separator: "\n")
    }

    /// WebVTT's `HH:MM:SS.mmm`.
    static func timestamp(_ seconds: Double) -> String {
        let ms = seconds.isFinite ? Int(min(max(seconds, 0), ThumbRequest.maxSeconds) * 1000 + 0.5) : 0
        let (h, m, s, f) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let three = f < 10 ? "00\(f)" : f < 100 ? "0\(f)" : "\(f)"
        return "\(two(h)):\(two(m)):\(two(s)).\(three)"
    }
}
