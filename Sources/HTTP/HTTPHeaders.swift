/// Header fields in the order received; names compare case-insensitively.
public struct HTTPHeaders: Sendable, Equatable {
    public private(set) var fields: [(name: String, value: String)] = []

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

    public mutating func append(_ name: String, _ value: String) { fields.append((name, value)) }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { HTTPHeaders.equalNames($0.name, name) }.map(\.value)
    }

    /// The first value of `name`.
    public subscript(_ name: String) -> String? {
        fields.first { HTTPHeaders.equalNames($0.name, name) }?.value
    }

    public var count: Int { fields.count }

    static func equalNames(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { lower($0) == lower($1) }
    }

    private static func lower(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x5A ? c | 0x20 : c }

    public static func == (a: HTTPHeaders, b: HTTPHeaders) -> Bool {
        a.fields.elementsEqual(b.fields) { $0.name == $1.name && $0.value == $1.value }
    }
}

func trimmed(_ s: Substring) -> Substring {
    var s = s
    while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
    while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
    return s
}
