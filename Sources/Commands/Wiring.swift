import Configuration
import Core
import Imaging
import SourceStores
import Stores
import Syscalls

/// libvips' pipeline as the service's renderer.
struct LibvipsRenderer: Renderer {
    let thumbnailer: Thumbnailer

    func render(
        _ file: OpenFile, page: Int, trim: Double?, order: (SourceDescription) throws(AspectError) -> RenderOrder
    )
        throws(ServiceFailure) -> (bytes: [UInt8], format: ImageFormat)
    {
        do throws(ImagingError) {
            let r = try thumbnailer.render(file: file, page: page, trim: trim, order: order)
            return (r.bytes, r.format)
        } catch {
            throw ServiceFailure(error.error, stage: error.stage.rawValue, detail: error.detail)
        }
    }

    func describe(_ file: OpenFile, page: Int, trim: Double?) throws(ServiceFailure) -> SourceFacts {
        do throws(ImagingError) {
            return try thumbnailer.describe(file: file, page: page, trim: trim)
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
            return FolderSource(path, checkIntervalMs: config.images.rootCheckMs)
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
