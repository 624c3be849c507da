import Foundation
import Testing

@testable import Configuration
@testable import Core

/// SPEC's presets: expansion, overrides, onlyPresets, and presets checked at load.
@Suite struct PresetsTests {
    let presets: Presets

    init() throws {
        presets = try Presets(
            ["avatar": "w=64&h=64&mode=fill&gravity=smart&shape=circle", "card": "w=300&ratio=4:3&mode=fill"],
            limits: defaultLimits)
    }

    func parsed(_ query: String, only: Bool = false) throws -> ThumbRequest {
        try ThumbRequest.parse(
            presets.expand(QueryParameters.decode(query), onlyPresets: only), limits: defaultLimits)
    }

    @Test func aPresetExpandsAndTheRequestWins() throws {
        let avatar = try parsed("src=a.jpg&preset=avatar")
        #expect(
            avatar
                == (try ThumbRequest.parse(
                    query: "src=a.jpg&w=64&h=64&mode=fill&gravity=smart&shape=circle", limits: defaultLimits)))
        // The same canonical form, so the same cache entry as the parameters spelled out.
        #expect(avatar.canonical == (try parsed("src=a.jpg&w=64&h=64&mode=fill&gravity=smart&shape=circle").canonical))
        let wider = try parsed("src=a.jpg&preset=card&w=600&format=webp")
        #expect(wider.width == 600 && wider.mode == .fill && wider.format == .webp)
    }

    func outcome(_ query: String, only: Bool) -> Result<ThumbRequest, AspectError> {
        Result { () throws(AspectError) -> ThumbRequest in
            try ThumbRequest.parse(
                presets.expand(QueryParameters.decode(query), onlyPresets: only), limits: defaultLimits)
        }
    }

    @Test func badPresetRequestsAre400sNamingThePresets() {
        for (query, words) in [
            ("src=a.jpg&preset=banner", "preset 'banner' is not configured; the presets are avatar, card"),
            ("src=a.jpg&preset=card&preset=avatar", "preset is given more than once"),
        ] {
            guard case .failure(let e) = outcome(query, only: false) else {
                Issue.record("\(query) was served")
                continue
            }
            #expect(e.code == .badParam && e.message.contains(words), "\(e.message)")
        }
    }

    @Test func onlyPresetsRefusesEverythingElse() throws {
        #expect(try parsed("src=a.jpg&preset=avatar&dpr=2&format=png", only: true).dpr == 2)
        for (query, words) in [
            ("src=a.jpg&w=100", "w is not allowed: this server serves presets only"),
            ("src=a.jpg&preset=avatar&mode=fit", "mode is not allowed"),
            ("src=a.jpg", "preset is required"),
        ] {
            guard case .failure(let e) = outcome(query, only: true) else {
                Issue.record("\(query) was served")
                continue
            }
            #expect(e.code == .badParam && e.message.contains(words), "\(e.message)")
        }
    }

    /// A preset that is not a valid request stops the configuration, naming it; the
    /// presets come from the file or from ASPECT_PRESETS as one JSON object.
    @Test func presetsAreCheckedAtLoad() throws {
        let load = { (env: [String: String], file: String?) throws(ConfigError) -> Config in
            try Config.load(
                ConfigSources(
                    filePath: file == nil ? nil : "/etc/aspect/config.json", fileContents: file.map { Data($0.utf8) },
                    environment: env, workingDirectory: "/srv"))
        }
        let fromFile = try load([:], #"{"presets": {"thumb": "w=200&ratio=1&mode=fill"}}"#)
        #expect(fromFile.presets == ["thumb": "w=200&ratio=1&mode=fill"])
        let fromEnv = try load(["ASPECT_PRESETS": #"{"hero": "w=1200&ratio=16:9&mode=fill"}"#], nil)
        #expect(fromEnv.presets == ["hero": "w=1200&ratio=16:9&mode=fill"])
        for (presets, words) in [
            (#"{"broken": "w=abc"}"#, "preset 'broken' is not a valid request: w must be an integer"),
            (#"{"sneaky": "src=../x.jpg&w=10"}"#, "preset 'sneaky' is not a valid request: may not set src"),
            (#"{"bad name": "w=10"}"#, "preset 'bad name' has a name"),
            (#"{"three": "w=10&h=10&ratio=1"}"#, "give at most two"),
        ] {
            do {
                _ = try load(["ASPECT_PRESETS": presets], nil)
                Issue.record("\(presets) was accepted")
            } catch {
                #expect(error.key == "presets" && error.message.contains(words), "\(error)")
            }
        }
    }
}
