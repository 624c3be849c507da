import Configuration
import Core
import Hashing
import Imaging
import Service
import SourceStores
import Stores
import Syscalls

/// libvips' pipeline as the service's renderer.
struct LibvipsRenderer: Renderer {
    let thumbnailer: Thumbnailer

    func render(
        _ file: OpenFile, reading: SourceReading, wantFacts: Bool,
        order: (SourceDescription) throws(AspectError) -> RenderOrder
    )
        throws(ServiceFailure) -> RenderedImage
    {
        do throws(ImagingError) {
            let r = try thumbnailer.render(file: file, reading: reading, wantFacts: wantFacts, order: order)
            return RenderedImage(bytes: r.bytes, format: r.format, quality: r.quality, facts: r.facts, chosen: r.chosen)
        } catch {
            throw ServiceFailure(error.error, stage: error.stage.rawValue, detail: error.detail)
        }
    }

    func describe(_ file: OpenFile, reading: SourceReading) throws(ServiceFailure) -> SourceFacts {
        do throws(ImagingError) {
            return try thumbnailer.describe(file: file, reading: reading)
        } catch {
            throw ServiceFailure(error.error, stage: error.stage.rawValue, detail: error.detail)
        }
    }

    func header(_ file: OpenFile, reading: SourceReading) throws(ServiceFailure) -> SourceDescription {
        do throws(ImagingError) {
            return try thumbnailer.header(file: file, reading: reading)
        } catch {
            throw ServiceFailure(error.error, stage: error.stage.rawValue, detail: error.detail)
        }
    }
}

extension SourceRoot {
    /// The store `images.root` names: a folder, an HTTP origin, or an S3 bucket, the
    /// remote ones with their downloads kept under `cache.dir`/sources.
    static func store(_ config: Config) -> any SourceStore {
        let root = (try? SourceRoot(config.images.root)) ?? .folder(config.images.root)
        let cacheDir = config.cache.dir + "/sources"
        switch root {
        case .folder(let path):
            return FolderSource(
                path, checkIntervalMs: config.images.rootCheckMs, watchChanges: config.images.watchChanges)
        case .http(let base):
            return RemoteSource(
                origin: HTTPOrigin(base: base), settings: FetchSettings(config), cacheDir: cacheDir,
                cacheMaxBytes: config.sources.cacheMaxBytes)
        case .s3(let bucket, let prefix):
            return RemoteSource(
                origin: S3Origin(bucket: bucket, prefix: prefix, s3: config.s3), settings: FetchSettings(config),
                cacheDir: cacheDir, cacheMaxBytes: config.sources.cacheMaxBytes)
        }
    }
}

/// The configured watermarks, read once at start-up through the source store.
enum WatermarkLoader {
    /// Each watermark's image into the thumbnailer, and its size and digest into the
    /// configuration (the digest goes into the cache key); nil, or what failed, naming it.
    static func load(_ config: inout Config, into thumbnailer: inout Thumbnailer, from sources: any SourceStore)
        -> String?
    {
        for (name, var mark) in config.watermarks.sorted(by: { $0.key < $1.key }) {
            func failed(_ why: String) -> String { "the watermark \(name) (\(mark.src)) cannot be read: \(why)" }
            var identity: SourceIdentity
            switch sources.resolve(mark.src) {
            case .ready(let id), .stale(let id): identity = id
            case .failed(let f): return failed(f.error.message)
            case .needsFetch:
                switch sources.fetch(mark.src) {
                case .success(let id): identity = id
                case .failure(let f): return failed(f.error.message)
                }
            }
            let file: OpenFile
            switch sources.open(identity) {
            case .success(let f): file = f
            case .failure(let f): return failed(f.error.message)
            }
            do throws(ImagingError) {
                let image = try thumbnailer.watermark(file: file)
                mark.size = image.size
                mark.digest = Hex.string(
                    SHA256.digest(Array("\(image.size.width)x\(image.size.height)\u{0}".utf8) + image.rgba))
                thumbnailer.watermarks[name] = image
                config.watermarks[name] = mark
            } catch {
                return failed(error.error.message)
            }
        }
        return nil
    }
}

extension ImagingLimits {
    /// The imaging's settings, taken from the configuration here, where the parts are wired:
    /// Imaging knows its own settings as a value, not the configuration.
    init(_ config: Config) {
        self.init(
            maxSourceBytes: config.limits.maxSourceBytes, maxSourcePixels: config.limits.maxSourcePixels,
            formats: Set(config.images.formats), processingTimeoutMs: config.limits.processingTimeoutMs,
            fastShrinkOnLoad: config.images.fastShrinkOnLoad)
        maxAnimationFrames = config.limits.maxAnimationFrames
        maxSvgElements = config.limits.maxSvgElements
        maxVideoSeconds = config.limits.maxVideoSeconds
        videoDefaultSeconds = config.video.defaultSeconds
        keepCopyright = config.output.keepCopyright
        faceUpsample = config.faces.upsample
        avifEffort = config.output.avifEffort
    }
}

/// `images.fallback` (imgproxy's fallback image): what the handler shows in place of a
/// missing or undecodable source, and the sources that can show it (data is written once
/// into the cache folder and answered under a reserved name); nil when it is not set, or
/// the problem when the data cannot be written.
enum FallbackWiring {
    static func wire(_ config: Config, _ sources: any SourceStore) -> Result<
        (fallback: ServiceHandler.Fallback?, sources: any SourceStore), ConfigError
    > {
        let images = config.images
        guard !images.fallback.isEmpty else { return .success((nil, sources)) }
        var src = images.fallback
        var store = sources
        if let data = images.fallbackData {
            guard let wrapped = FallbackDataSource(wrapping: sources, bytes: data, dir: config.cache.dir + "/fallback")
            else {
                return .failure(
                    ConfigError(key: "images.fallback", message: "its data cannot be written under cache.dir"))
            }
            (src, store) = (FallbackDataSource.reservedName, wrapped)
        }
        return .success(
            (
                ServiceHandler.Fallback(
                    src: src, status: images.fallbackStatus, maxAgeSeconds: images.fallbackMaxAgeSeconds), store
            ))
    }
}
