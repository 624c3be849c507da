import Core

/// An imgproxy geometry the native parameters cannot say, as the request's planner.
extension ImgproxyGeometry: GeometryPlanner {
    public var name: String { "imgproxy" }

    public func plan(source: SourceDescription, request: ThumbRequest, limits: RequestLimits) throws(AspectError)
        -> Plan
    {
        try plan(source: source.size, request: request, isVector: source.isVector, limits: limits)
    }
}

extension ThumbRequest {
    /// The imgproxy geometry that plans this request, if it has one.
    public var imgproxy: ImgproxyGeometry? {
        get { planner?.rules as? ImgproxyGeometry }
        set { planner = newValue.map { Planner($0) } }
    }
}
