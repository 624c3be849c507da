import Foundation
import Testing

@testable import Configuration
@testable import Core

@Suite struct ConfigTests {
    func load(
        file: String? = nil, path: String = "/etc/aspect/config.json", env: [String: String] = [:],
        flags: [String: String] = [:]
    ) throws(ConfigError) -> Config {
        try Config.load(
            ConfigSources(
                filePath: file == nil ? nil : path, fileContents: file.map { Data($0.utf8) }, environment: env,
                flags: flags, workingDirectory: "/srv/aspect"))
    }

    func failure(
        file: String? = nil, env: [String: String] = [:], flags: [String: String] = [:]
    ) -> ConfigError? {
        do throws(ConfigError) {
            _ = try load(file: file, env: env, flags: flags)
            return nil
        } catch {
            return error
        }
    }

    @Test func defaults() throws {
        let c = try load()
        #expect(c.server.host == "127.0.0.1" && c.server.port == 8080)
        #expect(c.server.workers == 0 && c.server.queueDepth == 64)
        #expect(c.images.root == "/srv/aspect/samples" && c.cache.dir == "/srv/aspect/cache")
        #expect(c.limits.maxDimension == 4096 && c.limits.maxDpr == 4)
        #expect(!c.signingEnabled)
        #expect(c.log.format == .text && c.log.level == .info)
    }

    /// An empty path key stays unset: `ASPECT_SOURCES_CAFILE=` (as a ConfigMap writes an
    /// empty value) once became the working folder, which libcurl then tried as a CA file.
    @Test func anEmptyPathIsNoPath() throws {
        #expect(try load(env: ["ASPECT_SOURCES_CAFILE": ""]).sources.caFile == "")
        #expect(try load(file: #"{"sources": {"caFile": ""}}"#).sources.caFile == "")
        #expect(try load(env: ["ASPECT_SOURCES_CAFILE": "ca.pem"]).sources.caFile == "/srv/aspect/ca.pem")
    }

    @Test func precedenceFlagOverEnvironmentOverFileOverDefault() throws {
        let file = #"{"server": {"port": 9001, "host": "0.0.0.0", "workers": 3}, "limits.maxDpr": 2}"#
        let env = ["ASPECT_SERVER_PORT": "9002", "ASPECT_SERVER_WORKERS": "5"]
        let flags = ["server.port": "9003"]

        let fromFile = try load(file: file)
        #expect(fromFile.server.port == 9001 && fromFile.server.host == "0.0.0.0" && fromFile.server.workers == 3)
        #expect(fromFile.limits.maxDpr == 2)
        #expect(fromFile.server.queueDepth == 64)  // not in the file: default

        let fromEnv = try load(file: file, env: env)
        #expect(fromEnv.server.port == 9002 && fromEnv.server.workers == 5 && fromEnv.server.host == "0.0.0.0")

        let fromFlag = try load(file: file, env: env, flags: flags)
        #expect(fromFlag.server.port == 9003 && fromFlag.server.workers == 5 && fromFlag.server.host == "0.0.0.0")

        let envOnly = try load(env: ["ASPECT_SERVER_PORT": "9004"])
        #expect(envOnly.server.port == 9004)
    }

    /// thumbor's SECURITY_KEY as thumbor's own variable, under Aspect's; `/unsafe/` is
    /// answered while no key is set and not once one is, unless said (ALLOW_UNSAFE_URL).
    @Test func thumborsKeyAndUnsafeURLs() throws {
        #expect(try load().thumborUnsafeAllowed)
        let keyed = try load(env: ["THUMBOR_SECURITY_KEY": "k1"])
        #expect(keyed.thumbor.securityKey == "k1" && !keyed.thumborUnsafeAllowed)
        #expect(
            try load(env: ["THUMBOR_SECURITY_KEY": "k1", "ASPECT_THUMBOR_SECURITYKEY": "k2"]).thumbor.securityKey
                == "k2")
        #expect(
            try load(env: ["THUMBOR_SECURITY_KEY": "k1", "ASPECT_THUMBOR_ALLOWUNSAFE": "true"]).thumborUnsafeAllowed)
        #expect(throws: ConfigError.self) { _ = try load(env: ["ASPECT_THUMBOR_ALLOWUNSAFE": "sometimes"]) }
        #expect(
            !(try load(env: ["ASPECT_SECURITY_SIGNINGKEY": "0123456789abcdef"]).thumborUnsafeAllowed),
            "a server that signs its native URLs")
    }

    @Test func everyKeyHasItsEnvironmentVariable() throws {
        #expect(Config.key("server.port")?.environmentName == "ASPECT_SERVER_PORT")
        #expect(Config.key("images.root")?.environmentName == "ASPECT_IMAGES_ROOT")
        #expect(Config.key("server.headerTimeoutMs")?.environmentName == "ASPECT_SERVER_HEADERTIMEOUTMS")
        // Each key, set from the environment, changes what the loaded configuration says.
        let values: [String: String] = [
            "server.host": "::1", "server.port": "1234", "server.workers": "7", "server.queueDepth": "9",
            "server.maxConnections": "11", "server.minSendBytesPerSecond": "2048", "server.headerTimeoutMs": "1500",
            "server.idleTimeoutMs": "2500",
            "server.writeTimeoutMs": "3500", "server.drainTimeoutMs": "4500", "server.eventLoops": "3",
            "server.lingerTimeoutMs": "750", "server.acceptBackoffMs": "40", "images.rootCheckMs": "250",
            "images.watchChanges": "false",
            "cache.recheckMs": "2000", "cache.shared": "s3://results/aspect/", "cache.sharedQueue": "50",
            "cache.memoryFileBytes": "4096",
            "log.access": "false", "images.formats": "jpeg,png", "images.fastShrinkOnLoad": "false",
            "images.root": "/img", "cache.dir": "/c", "cache.maxBytes": "2GiB", "cache.openFiles": "5",
            "http.maxAgeSeconds": "60", "http.demoPage": "true",
            "limits.maxDimension": "1000", "limits.maxDpr": "2.5", "limits.maxSourceBytes": "10MB",
            "limits.maxSourcePixels": "1000000", "limits.processingTimeoutMs": "500",
            "security.signingKey": "0123456789abcdef", "log.format": "json", "log.level": "debug",
            "sources.concurrency": "4", "sources.queueDepth": "40", "sources.connectTimeoutMs": "700",
            "sources.timeoutMs": "9000", "sources.maxRedirects": "2", "sources.caFile": "/etc/ca.pem",
            "sources.cacheMaxBytes": "1000", "sources.revalidateSeconds": "30", "sources.staleSeconds": "20",
            "s3.endpoint": "http://127.0.0.1:9000", "s3.region": "eu-west-3", "s3.pathStyle": "true",
            "s3.accessKeyId": "AKIDEXAMPLE", "s3.secretAccessKey": "wJalrXUtnFEMI", "s3.sessionToken": "token",
            "security.onlyPresets": "true", "http.autoAvif": "true", "http.autoJxl": "true",
            "limits.maxAnimationFrames": "50",
            "limits.maxSvgElements": "500",
            "limits.maxVideoSeconds": "12.5",
            "limits.maxTiles": "50",
            "video.defaultSeconds": "2",
            "http.clientHints": "true",
            "http.saveData": "true",
            "http.saveDataQuality": #"{"avif": 30, "jpeg": 40, "jxl": 45, "webp": 42}"#,
            "output.keepCopyright": "true",
            "output.quality": "auto",
            "output.autoQualityMin": "25",
            "output.autoQualityMax": "85",
            "output.autoQualitySSIM": "0.99",
            "output.format": "best",
            "output.bestFormats": "webp,jpeg",
            "output.bestMaxPixels": "500000",
            "output.avifEffort": "4",
            "video.previewFrameMs": "250",
            "faces.upsample": "false",
            "server.isolation": "thread",
            "limits.workerMemoryBytes": "1073741824",
            "limits.poisonSeconds": "60",
            "limits.maxResultBytes": "33554432",
            "server.sandbox": "strict",
            "server.workerJobs": "10",
            "security.adminToken": "(set)",
            "presets": #"{"card": "w=300&ratio=4:3&mode=fill"}"#,
            "imgproxy.enabled": "true",
            "imgproxy.key": "abcd",
            "imgproxy.salt": "0011",
            "imgproxy.signatureSize": "16",
            "imgproxy.presets": #"{"card": "rs:fill:300:200/q:80"}"#,
            "thumbor.enabled": "true",
            "images.fallback": "missing/placeholder.png",
            "images.fallbackStatus": "404",
            "images.fallbackMaxAgeSeconds": "120",
            "thumbor.securityKey": "(set)",
            "thumbor.allowUnsafe": "true",
            "watermarks":
                #"{"logo": {"src": "brand/logo.png", "position": "north", "opacity": 0.5, "scale": 0.3, "margin": 12}}"#,
        ]
        #expect(Set(values.keys) == Set(Config.keys.map(\.name)))
        let env = Dictionary(
            uniqueKeysWithValues: Config.keys.compactMap { k in values[k.name].map { (k.environmentName, $0) } })
        let c = try load(env: env)
        let rendered = Dictionary(uniqueKeysWithValues: c.rendered.map { ($0.key, $0.value) })
        #expect(rendered["cache.maxBytes"] == "\(2 << 30)")
        #expect(rendered["limits.maxSourceBytes"] == "10000000")
        #expect(rendered["security.signingKey"] == "(set)")
        #expect(c.security.signingKey == "0123456789abcdef")
        // Credentials are never shown, only that they are set.
        #expect(rendered["s3.secretAccessKey"] == "(set)" && rendered["s3.sessionToken"] == "(set)")
        #expect(c.s3.secretAccessKey == "wJalrXUtnFEMI" && c.s3.sessionToken == "token")
        #expect(rendered["imgproxy.key"] == "(set)" && rendered["imgproxy.salt"] == "(set)")
        #expect(c.imgproxy.key == "abcd" && c.imgproxy.salt == "0011")
        let masked = [
            "cache.maxBytes", "limits.maxSourceBytes", "security.signingKey", "s3.secretAccessKey", "s3.sessionToken",
            "imgproxy.key", "imgproxy.salt",
        ]
        for key in Config.keys where !masked.contains(key.name) {
            #expect(rendered[key.name] == values[key.name], "\(key.name)")
        }
    }

    /// Each s3 key falls back to the AWS variable every S3 tool reads, below Aspect's own.
    /// A byte count in plain bytes may be as long as a disk's size (13 digits for a TiB),
    /// not only as long as a URL's numbers; the units still work, and an overflow is refused.
    @Test func byteCountsOfADisksSize() throws {
        for (text, bytes) in [
            ("1099511627776", Int64(1) << 40), ("2TiB", Int64(2) << 40), ("5GB", 5_000_000_000), ("4096", 4096),
        ] {
            let c = try load(env: ["ASPECT_CACHE_MAXBYTES": text])
            #expect(c.cache.maxBytes == bytes, "\(text)")
        }
        #expect(throws: (any Error).self) { try load(env: ["ASPECT_CACHE_MAXBYTES": "99999999999999999999"]) }
        #expect(throws: (any Error).self) { try load(env: ["ASPECT_CACHE_MAXBYTES": "12 parsecs"]) }
    }

    @Test func s3KeysFallBackToTheAWSVariables() throws {
        let aws = [
            "AWS_ENDPOINT_URL": "http://minio:9000", "AWS_DEFAULT_REGION": "eu-north-1", "AWS_REGION": "eu-west-1",
            "AWS_ACCESS_KEY_ID": "AKIA1", "AWS_SECRET_ACCESS_KEY": "secret1", "AWS_SESSION_TOKEN": "tok1",
        ]
        let c = try load(env: aws)
        #expect(c.s3.endpoint == "http://minio:9000" && c.s3.region == "eu-west-1")
        #expect(c.s3.accessKeyId == "AKIA1" && c.s3.secretAccessKey == "secret1" && c.s3.sessionToken == "tok1")
        var both = aws
        both["ASPECT_S3_ACCESSKEYID"] = "AKIA2"
        let own = try load(file: #"{"s3": {"region": "ap-south-1"}}"#, env: both)
        #expect(own.s3.accessKeyId == "AKIA2", "ASPECT_ over AWS_")
        #expect(own.s3.region == "ap-south-1", "the file over AWS_")
    }

    @Test func remoteRootsAreKeptAsURLsAndCheckedAtStart() throws {
        let http = try load(env: ["ASPECT_IMAGES_ROOT": "https://img.example.com/photos"])
        #expect(http.images.root == "https://img.example.com/photos")
        #expect(try SourceRoot(http.images.root) == .http(base: "https://img.example.com/photos/"))
        #expect(try SourceRoot("s3://my-bucket/a/b") == .s3(bucket: "my-bucket", prefix: "a/b/"))
        #expect(try SourceRoot("s3://my-bucket") == .s3(bucket: "my-bucket", prefix: ""))
        #expect(try SourceRoot("/srv/img") == .folder("/srv/img"))
        for bad in ["ftp://host/x/", "https:///x", "https://user:pw@host/", "s3://My_Bucket/", "https://h/x?y=1"] {
            #expect(throws: ConfigError.self, "\(bad)") { try load(env: ["ASPECT_IMAGES_ROOT": bad]) }
        }
        // Each segment of src is percent-encoded: '?', '#', '%' and spaces stay in the path.
        #expect(
            SourceRoot.url(base: "http://o/i/", src: "a b/c?d#e%f/ü.jpg") == "http://o/i/a%20b/c%3Fd%23e%25f/%C3%BC.jpg"
        )
    }

    @Test func relativePathsFollowTheirSource() throws {
        let file = #"{"images": {"root": "img"}, "cache": {"dir": "./cache/"}}"#
        let c = try load(file: file, path: "deploy/config.json")
        #expect(c.images.root == "/srv/aspect/deploy/img")  // beside the file
        #expect(c.cache.dir == "/srv/aspect/deploy/cache")
        let e = try load(file: file, path: "deploy/config.json", env: ["ASPECT_IMAGES_ROOT": "other"])
        #expect(e.images.root == "/srv/aspect/other")  // from the working directory
        let abs = try load(flags: ["cache.dir": "/var/cache/aspect"])
        #expect(abs.cache.dir == "/var/cache/aspect")
    }

    struct Bad: Sendable, CustomTestStringConvertible {
        let key: String
        let value: String
        let message: String
        var testDescription: String { "\(key)=\(value)" }
    }

    static let bad: [Bad] = [
        Bad(key: "server.host", value: "", message: "must be a non-empty string"),
        Bad(key: "server.port", value: "abc", message: "must be an integer from 0 to 65535, got 'abc'"),
        Bad(key: "server.port", value: "65536", message: "must be an integer from 0 to 65535, got '65536'"),
        Bad(key: "server.workers", value: "-1", message: "must be an integer from 0 to 256"),
        Bad(key: "server.queueDepth", value: "0", message: "must be an integer from 1 to 100000"),
        Bad(key: "server.maxConnections", value: "-1", message: "must be an integer from 0 to 1000000"),
        Bad(key: "server.headerTimeoutMs", value: "5", message: "must be an integer from 100 to 600000"),
        Bad(key: "server.idleTimeoutMs", value: "1.5", message: "must be an integer from 100 to 3600000"),
        Bad(key: "images.root", value: "", message: "must be a non-empty string"),
        Bad(key: "cache.dir", value: "", message: "must be a non-empty string"),
        Bad(key: "cache.maxBytes", value: "lots", message: "must be a byte count"),
        Bad(key: "cache.maxBytes", value: "99999999999999999999GB", message: "must be a byte count"),
        Bad(key: "http.maxAgeSeconds", value: "-3", message: "must be an integer from 0 to 1000000000"),
        Bad(key: "limits.maxDimension", value: "0", message: "must be an integer from 1 to 65535"),
        Bad(key: "limits.maxDpr", value: "0.5", message: "must be a number from 1 to 10"),
        Bad(key: "limits.maxSourceBytes", value: "0", message: "must be a byte count from 1"),
        Bad(key: "limits.maxSourcePixels", value: "x", message: "must be a byte count from 1"),
        Bad(key: "limits.processingTimeoutMs", value: "1", message: "must be an integer from 10 to 3600000"),
        Bad(key: "security.signingKey", value: "short", message: "at least 16 characters"),
        Bad(key: "log.format", value: "xml", message: "must be one of text, json, got 'xml'"),
        Bad(key: "log.level", value: "loud", message: "must be one of debug, info, warn, error, got 'loud'"),
        Bad(key: "log.access", value: "maybe", message: "must be true or false, got 'maybe'"),
        Bad(key: "images.fastShrinkOnLoad", value: "yes", message: "must be true or false, got 'yes'"),
        Bad(key: "images.formats", value: "jpeg,bmp", message: "must list formats among jpeg, png"),
        Bad(key: "server.eventLoops", value: "65", message: "must be an integer from 0 to 64"),
        Bad(key: "server.writeTimeoutMs", value: "0", message: "must be an integer from 100 to 3600000"),
        Bad(key: "server.drainTimeoutMs", value: "-1", message: "must be an integer from 0 to 3600000"),
    ]

    @Test(arguments: bad)
    func invalidValuesNameTheKeyAndTheirSource(_ bad: Bad) throws {
        let envName = try #require(Config.key(bad.key)).environmentName
        let fromEnv = try #require(failure(env: [envName: bad.value]))
        #expect(fromEnv.key == bad.key)
        #expect(fromEnv.message.contains(bad.message), "\(fromEnv.message)")
        #expect(fromEnv.message.contains("from \(envName)"))

        let fromFlag = try #require(failure(flags: [bad.key: bad.value]))
        #expect(fromFlag.key == bad.key && fromFlag.message.contains("from its flag"))

        let json = String(decoding: try JSONEncoder().encode([bad.key: bad.value]), as: UTF8.self)
        let fromFile = try #require(failure(file: json))
        #expect(fromFile.key == bad.key && fromFile.message.contains("in /etc/aspect/config.json"))
    }

    @Test func fileProblems() throws {
        #expect(failure(file: "{nope")?.message.contains("is not valid JSON") == true)
        #expect(failure(file: "[1]")?.message.contains("must hold a JSON object") == true)
        let unknown = try #require(failure(file: #"{"server": {"prot": 1}}"#))
        #expect(unknown.key == "server.prot" && unknown.message.contains("is not a configuration key"))
        let wrongType = try #require(failure(file: #"{"server": {"port": "80", "host": 5}}"#))
        #expect(wrongType.key == "server.host" && wrongType.message.contains("got 5"))
        #expect(failure(file: #"{"server": {"port": 8.5}}"#)?.key == "server.port")
        #expect(failure(file: #"{"server": {"port": true}}"#)?.key == "server.port")
        #expect(failure(file: #"{"server": {"port": null}}"#)?.message.contains("got null") == true)
        // Typed JSON and text mean the same.
        #expect(try load(file: #"{"server": {"port": "81"}}"#).server.port == 81)
        #expect(try load(file: #"{"cache": {"maxBytes": "512MiB"}}"#).cache.maxBytes == 512 << 20)
        #expect(try load(file: #"{"images": {"formats": ["png", "svg"]}}"#).images.formats == ["png", "svg"])
        #expect(failure(file: #"{"images": {"formats": ["png", 3]}}"#)?.key == "images.formats")
    }

    @Test func unknownEnvironmentIsReported() {
        let env = ["ASPECT_SERVER_PROT": "1", "ASPECT_SERVER_PORT": "1", "ASPECT_CONFIG": "x", "HOME": "/root"]
        #expect(Config.unknownEnvironment(env) == ["ASPECT_SERVER_PROT"])
    }

    @Test func serveArguments() throws {
        let a = try ServeArguments.parse([
            "--config", "c.json", "--port=9000", "--host", "0.0.0.0", "--images", "img",
            "--cache-dir", "/c", "--signing-key", "k", "--workers", "2",
        ])
        #expect(a.configPath == "c.json")
        #expect(
            a.overrides == [
                "server.port": "9000", "server.host": "0.0.0.0", "images.root": "img", "cache.dir": "/c",
                "security.signingKey": "k", "server.workers": "2",
            ])
        #expect(try ServeArguments.parse(["-h"]).help)
        #expect(throws: ConfigError.self) { try ServeArguments.parse(["--prot", "1"]) }
        #expect(throws: ConfigError.self) { try ServeArguments.parse(["--port"]) }
        #expect(throws: ConfigError.self) { try ServeArguments.parse(["stray"]) }
    }
}
