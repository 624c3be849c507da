import Core

/// A thumbor geometry, as the request's planner (thumbor's URLs are always planned by
/// thumbor's rules but where `ThumborURL.settle` finds the native request that means them).
extension ThumborGeometry: GeometryPlanner {
    public var name: String { "thumbor" }

    public func plan(source: SourceDescription, request: ThumbRequest, limits: RequestLimits) throws(AspectError)
        -> Plan
    {
        try plan(source: source.thumbor, request: request, limits: limits)
    }
}

extension SourceDescription {
    /// The source as a thumbor plan reads it.
    public var thumbor: ThumborSource { ThumborSource(size: size, trim: trim, untrimmed: untrimmed) }
}

extension ThumbRequest {
    /// The thumbor geometry that plans this request, if it has one.
    public var thumbor: ThumborGeometry? {
        get { planner?.rules as? ThumborGeometry }
        set { planner = newValue.map { Planner($0) } }
    }
}
