/// Header fields in the order received; names compare case-insensitively.
public struct HTTPHeaders: Sendable, Equatable {
    public private(set) var fields: [(name: String, value: String)] = []
    /// The fields as written on the wire, made once by `prepared()` for fields that go
    /// out on many answers (a cache hit's); dropped by any change.
    private var wire: Wire?

    /// An immutable byte block, shared by the copies of prepared fields.
    final class Wire: Sendable {
        let bytes: [UInt8]
        init(_ bytes: [UInt8]) { self.bytes = bytes }
    }

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

    public mutating func append(_ name: String, _ value: String) {
        fields.append((name, value))
        wire = nil
    }

    /// `name` with this one value, in place of any it had.
    public mutating func set(_ name: String, _ value: String) {
        fields.removeAll { $0.name.lowercased() == name.lowercased() }
        append(name, value)
    }

    /// The same fields, with their wire form made now rather than on every write.
    public func prepared() -> HTTPHeaders {
        var h = self
        var bytes: [UInt8] = []
        Self.serialise(fields, into: &bytes)
        h.wire = Wire(bytes)
        return h
    }

    /// Appends `Name: value` CRLF for each field.
    func write(into out: inout [UInt8]) {
        if let wire {
            out.append(contentsOf: wire.bytes)
        } else {
            Self.serialise(fields, into: &out)
        }
    }

    private static func serialise(_ fields: [(name: String, value: String)], into out: inout [UInt8]) {
        // A native string's bytes are copied at once; the per-byte append is the fallback.
        func add(_ s: String) {
            if s.utf8.withContiguousStorageIfAvailable({ out.append(contentsOf: $0) }) == nil {
                out.append(contentsOf: s.utf8)
            }
        }
        for f in fields {
            add(f.name)
            out.append(UInt8(ascii: ":"))
            out.append(UInt8(ascii: " "))
            add(f.value)
            out.append(0x0D)
            out.append(0x0A)
        }
    }

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
