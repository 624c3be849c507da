/// A geometry the native parameters cannot say, planned by its own rules once the source is
/// known: a URL dialect's (a target of its own) translates what it can into `ThumbRequest`'s
/// native fields and hands the rest over as one of these. Core knows it only by this
/// protocol; the dialect that made it knows its type.
public protocol GeometryPlanner: Sendable {
    /// The planner's name in the canonical form (`name=text` stands in place of the native
    /// geometry's pairs, so of the cache key).
    var name: String { get }
    /// The geometry in one spelling: equal texts plan equal results.
    var text: String { get }
    /// The plan on a source described so, `request` giving what lies outside the geometry
    /// (the format, the effects, the limits it was parsed under).
    func plan(source: SourceDescription, request: ThumbRequest, limits: RequestLimits) throws(AspectError) -> Plan
}

/// A request's planner, compared by what it says (its name and text), so a request
/// holding one stays a value.
public struct Planner: Equatable, Sendable {
    public let rules: any GeometryPlanner

    public init(_ rules: any GeometryPlanner) { self.rules = rules }

    public static func == (a: Planner, b: Planner) -> Bool {
        a.rules.name == b.rules.name && a.rules.text == b.rules.text
    }
}
