import Core

extension AspectError.Code {
    /// The HTTP status of each code: the one place the mapping lives.
    var status: Int {
        switch self {
        case .badParam: 400
        case .badSignature, .forbiddenPath: 403
        case .notFound: 404
        case .methodNotAllowed: 405
        case .gone: 410
        case .unauthorized: 401
        case .sourceTooLarge: 413
        case .unsupportedSource: 415
        case .decodeCrashed: 422
        case .internalError: 500
        case .upstreamError, .workerProtocol: 502
        case .workerLost: 503
        case .processingTimeout, .upstreamTimeout: 504
        }
    }
}
