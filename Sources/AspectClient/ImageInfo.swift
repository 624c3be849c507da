import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What `GET /info` answers (SPEC: Info): enough to lay an image out before its pixels
/// arrive.
public struct ImageInfo: Decodable, Sendable, Equatable {
    public struct Source: Decodable, Sendable, Equatable {
        /// Upright (after EXIF orientation), in pixels.
        public let width: Int
        public let height: Int
        public let format: String
        public let hasAlpha: Bool
        public let orientation: Int
        public let frames: Int
        /// Pages of a TIFF, HEIF or PDF (1 for other sources); nil from a server before it.
        public let pages: Int?
        /// A video's length in seconds, its codec (`h264`, `vp9`, …) and frames a second;
        /// nil for any other source.
        public let duration: Double?
        public let codec: String?
        public let fps: Double?
        public let bytes: Int
    }

    /// What `/thumb` with the same parameters returns.
    public struct Output: Decodable, Sendable, Equatable {
        public let width: Int
        public let height: Int
        public let format: String
    }

    public let source: Source
    /// width / height of the upright source.
    public let ratio: Double
    /// Base64 of the ThumbHash: decode with `ThumbHashImage(base64:)`.
    public let thumbhash: String
    /// Wolt's BlurHash, 4×3 components.
    public let blurhash: String
    /// `#rrggbb`, or nil for an image with nothing opaque.
    public let averageColor: String?
    public let dominantColor: String?
    public let output: Output?
    /// The faces found, as fractions (0 … 1) of the upright source: asked with `faces: true`,
    /// or for a thumbnail with `gravity(.face)`; nil otherwise.
    public let faces: [Face]?

    /// A face's box: its left, top, width and height as fractions of the upright source.
    public struct Face: Decodable, Sendable, Equatable {
        public let x: Double
        public let y: Double
        public let w: Double
        public let h: Double
    }

    /// The ThumbHash decoded to pixels, or nil when it is malformed.
    public var placeholder: ThumbHashImage? { ThumbHashImage(base64: thumbhash) }
}

/// An Aspect server, as an app talks to it: URLs for thumbnails, and `/info`.
public struct AspectServer: Sendable {
    public let base: URL
    /// The signing key, when the server requires signed URLs. Keep it off devices you do
    /// not control: a key in an app lets anyone sign any request (see docs/clients.md).
    public let signingKey: String?

    public init(base: URL, signingKey: String? = nil) {
        self.base = base
        self.signingKey = signingKey
    }

    public struct Failure: Error, Sendable, Equatable {
        public let status: Int
        /// The server's message: what to fix.
        public let message: String
    }

    public func url(_ thumbnail: Thumbnail) -> URL? { thumbnail.url(base: base, signingKey: signingKey) }

    /// A request for `thumbnail`; with `saveData` (the user asked the app to save data, or
    /// the network is constrained), it carries `Save-Data: on`, and a server with
    /// `http.saveData` answers at its lower quality unless the thumbnail sets one.
    public func request(_ thumbnail: Thumbnail, saveData: Bool = false) -> URLRequest? {
        guard let url = url(thumbnail) else { return nil }
        var request = URLRequest(url: url)
        if saveData { request.setValue("on", forHTTPHeaderField: "Save-Data") }
        return request
    }

    /// `/info` of `src`, with `thumbnail`'s parameters when given (then `output` is set),
    /// and the faces found when `faces` is true.
    public func info(src: String, for thumbnail: Thumbnail? = nil, faces: Bool = false, session: URLSession = .shared)
        async throws -> ImageInfo
    {
        var t = thumbnail ?? Thumbnail(src: src)
        t = t.source(src)
        guard let url = t.infoURL(base: base, signingKey: signingKey, faces: faces) else {
            throw Failure(status: 0, message: "the /info URL cannot be made from \(base)")
        }
        let (data, response) = try await session.data(from: url)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else {
            struct Body: Decodable {
                struct E: Decodable { let message: String }
                let error: E
            }
            let message = (try? JSONDecoder().decode(Body.self, from: data))?.error.message ?? ""
            throw Failure(status: status, message: message)
        }
        return try JSONDecoder().decode(ImageInfo.self, from: data)
    }
}
