import Core
import Foundation
import HTTP
import Signing

// /thumb and /info: the native URL API.
extension ServiceHandler {
    /// The two endpoints that answer from a source: `/thumb` renders it, `/info` describes it.
    enum Endpoint: String, Sendable {
        case thumb = "/thumb"
        case info = "/info"
        /// A video storyboard's WebVTT index (SPEC: Video).
        case storyboard = "/storyboard.vtt"
    }

    /// `/thumb` or `/info`: the same parsing, signature (over the endpoint's path),
    /// source identity and result store; then a render or a description.
    func thumb(_ request: HTTPRequestHead, _ endpoint: Endpoint) -> Route {
        let accept = request.headers["Accept"]
        let autoTag = AcceptHeader.autoTag(accept, autoAvif: config.http.autoAvif, autoJxl: config.http.autoJxl)
        let hints = config.http.clientHints ? ClientHints(request.headers) : nil
        let saveData =
            config.http.saveData
            && request.headers["Save-Data"]?.trimmingCharacters(in: .whitespaces).lowercased() == "on"
        var memoQuery = endpoint == .thumb ? request.query : endpoint.rawValue + "?" + request.query
        if let hints, !hints.memo.isEmpty { memoQuery += hints.memo }
        if saveData { memoQuery += "\u{0}save-data" }
        let memoKey = RecentKeys.Target(
            query: memoQuery, autoTag: autoTag,
            bestTag: bestTag(accept, mayBeBest: request.query.contains("best") || request.query.contains("%")))
        if let known = recent.get(memoKey), isCurrent(known),
            let served = serveCached(request, key: known.key, headers: known.headers)
        {
            return served
        }
        let params: QueryParameters
        do throws(AspectError) {
            params = try QueryParameters.decode(request.query)
        } catch {
            return .respond(Self.error(error))
        }
        if let signer {
            // Checked on the parameters as sent, before anything else is looked at.
            guard let sig = params.pairs.first(where: { $0.name == "sig" })?.value else {
                return .respond(
                    Self.error(AspectError(.badSignature, "sig is required: this server only serves signed URLs")))
            }
            guard signer.verify(sig, path: endpoint.rawValue, params) else {
                return .respond(Self.error(AspectError(.badSignature, "sig does not match this request")))
            }
        }
        // The signature covers the request as sent (preset= included); then the preset's
        // parameters stand in for its name, the request's own winning.
        var parsed: ThumbRequest
        let expanded: QueryParameters
        do throws(AspectError) {
            expanded = try config.parsedPresets.expand(params, onlyPresets: config.security.onlyPresets)
            parsed = try ThumbRequest.parse(expanded, limits: limits)
        } catch {
            return .respond(Self.error(error))
        }
        // Not a storyboard (its index or a sheet): the index's #xywh are the sheets' as
        // their URLs say, whatever hints the browser sends with each.
        if let hints, endpoint != .storyboard, parsed.tiles == nil {
            parsed = hints.apply(
                to: parsed, given: Set(expanded.pairs.map(\.name)), limits: limits)
        }
        // Save-Data asks for fewer bytes; an explicit q still wins.
        if saveData, parsed.quality == nil, !parsed.autoQuality, endpoint == .thumb { parsed.saveData = true }
        if endpoint == .storyboard, parsed.tiles == nil || expanded.pairs.contains(where: { $0.name == "sheet" }) {
            return .respond(
                Self.error(
                    AspectError(
                        .badParam,
                        "storyboard.vtt indexes every sheet of a storyboard: give tiles=COLSxROWS, and no sheet")))
        }
        if endpoint == .thumb, parsed.faces {
            return .respond(
                Self.error(AspectError(.badParam, "faces=1 asks /info for the faces; /thumb takes no faces")))
        }
        // /info gives `output` when any /thumb parameter is there besides src.
        let wantsOutput = expanded.pairs.contains { !["src", "sig", "faces"].contains($0.name) }
        return resolving(
            CheckedRequest(
                request: request, parsed: parsed, memoKey: memoKey, accept: accept, endpoint: endpoint,
                wantsOutput: wantsOutput))
    }

    /// `AcceptHeader.bestTag` where a request may be `format=best` (`mayBeBest`: its
    /// target says "best"; or `output.format` or a preset says it); else empty, and
    /// `Accept` is read no further on a hit.
    func bestTag(_ accept: String?, mayBeBest: Bool) -> String {
        guard mayBeBest || bestWithoutSaying else { return "" }
        return AcceptHeader.bestTag(accept, formats: limits.bestFormats)
    }
}
