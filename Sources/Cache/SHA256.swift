import CVips

/// SHA-256 from GLib's GChecksum (linked with libvips): no home-made hashing.
enum SHA256 {
    /// Lower-case hex digest of `text`'s UTF-8 bytes.
    static func hex(_ text: String) -> String {
        var bytes = Array(text.utf8)
        guard
            let digest = bytes.withUnsafeMutableBytes({ raw in
                g_compute_checksum_for_data(
                    G_CHECKSUM_SHA256, raw.baseAddress?.assumingMemoryBound(to: guchar.self), gsize(raw.count))
            })
        else { return "" }
        defer { g_free(digest) }
        return String(cString: digest)
    }
}
