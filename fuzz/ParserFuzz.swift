// libFuzzer entry for the HTTP request parser: compiled together with Sources/HTTP by
// fuzz/parser.sh, outside SwiftPM, so only this binary carries the sanitizers.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzParser(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: count)
    var parser = RequestParser()
    var offset = 0
    while offset < bytes.count {
        let (consumed, result) = parser.parse(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
        // Every call makes progress or waits for more; it never reads past the input.
        precondition(consumed <= bytes.count - offset)
        offset += consumed
        switch result {
        case .needMore: return 0
        case .request(let head): precondition(!head.method.isEmpty)
        case .failure(let e):
            precondition((400...599).contains(e.status))
            return 0
        }
        if consumed == 0 { return 0 }
    }
    return 0
}
