import Cache
import Core
import Imaging
import Origins
import Service
import Syscalls

/// libvips' pipeline as the service's renderer.
struct LibvipsRenderer: Renderer {
    let thumbnailer: Thumbnailer

    func render(_ file: SourceFile, order: (SourceDescription) throws(AspectError) -> RenderOrder)
        throws(ServiceFailure) -> (bytes: [UInt8], format: ImageFormat)
    {
        do throws(ImagingError) {
            let r = try thumbnailer.render(file: file, order: order)
            return (r.bytes, r.format)
        } catch {
            throw ServiceFailure(error.error, stage: error.stage.rawValue, detail: error.detail)
        }
    }

    func describe(_ file: SourceFile) throws(ServiceFailure) -> SourceFacts {
        do throws(ImagingError) {
            return try thumbnailer.describe(file: file)
        } catch {
            throw ServiceFailure(error.error, stage: error.stage.rawValue, detail: error.detail)
        }
    }
}

/// The disk cache as the service's result store.
struct DiskResultStore: ResultStore {
    let cache: DiskCache

    func result(_ key: String) -> StoredResult? {
        cache.lookup(key).map { StoredResult(path: $0.path, kind: $0.format, size: $0.size) }
    }

    func keep(_ key: String, _ bytes: [UInt8], kind: String) -> Bool { cache.store(key, bytes, format: kind) }
    func drop(_ key: String) { cache.forget(key) }
    var problem: String? { cache.problem }
    var figures: (bytes: Int64, entries: Int, evictions: Int) { cache.figures }
}

enum SourceStores {
    /// The store `images.root` names: a folder, an HTTP origin, or an S3 bucket, the
    /// remote ones with their downloads kept under `cache.dir`/sources.
    static func make(_ config: Config) -> any SourceStore {
        let root = (try? SourceRoot(config.images.root)) ?? .folder(config.images.root)
        let cacheDir = config.cache.dir + "/sources"
        switch root {
        case .folder(let path):
            return ImageRoot(path, checkIntervalMs: config.images.rootCheckMs)
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
