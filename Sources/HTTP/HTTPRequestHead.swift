/// A parsed request: the request line and the header fields.
public struct HTTPRequestHead: Sendable, Equatable {
    /// As sent: `GET`, `HEAD`, … (methods are case-sensitive).
    public var method: String
    /// The request target as sent, still percent-encoded.
    public var target: String
    /// The target's path, percent-decoded (`/thumb`).
    public var path: String
    /// The part after `?`, still percent-encoded; empty when there is none.
    public var query: String
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    public var headers: HTTPHeaders
    /// Whether the connection stays open after the response: HTTP/1.1 without
    /// `Connection: close`. HTTP/1.0 connections always close.
    public var keepAlive: Bool

    public init(
        method: String, target: String, path: String, query: String, minorVersion: Int, headers: HTTPHeaders,
        keepAlive: Bool
    ) {
        self.method = method
        self.target = target
        self.path = path
        self.query = query
        self.minorVersion = minorVersion
        self.headers = headers
        self.keepAlive = keepAlive
    }

    public var isHead: Bool { method == "HEAD" }

    /// The target's path as sent, still percent-encoded: up to `?`, and from the path on
    /// in an absolute-form target (`http://host/path`). What a signature over the path as
    /// sent is checked against (imgproxy's, thumbor's).
    public var rawPath: String {
        var t = Substring(target)
        if !t.hasPrefix("/"), let colon = t.firstIndex(of: ":") {
            // scheme://authority/path: the path starts at the first `/` after the authority.
            let authority = t[colon...].drop { $0 == ":" || $0 == "/" }
            t = authority.firstIndex(of: "/").map { authority[$0...] } ?? "/"
        }
        return String(t.prefix { $0 != "?" })
    }
}
