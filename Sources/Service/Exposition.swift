import Stores

/// Prometheus' text format, one metric at a time: the one writer of `/metrics`.
struct Exposition {
    private(set) var text = ""

    /// `samples`: each sample's labels (`{route="/thumb"}`, or empty) and value.
    mutating func metric(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        for (labels, value) in samples { text += "\(name)\(labels) \(value)\n" }
    }

    mutating func metric(_ name: String, _ type: String, _ help: String, _ value: some Numeric) {
        metric(name, type, help, [("", "\(value)")])
    }

    mutating func histogram(_ name: String, _ help: String, _ h: Histogram) {
        var samples = zip(h.bounds, h.buckets).map { (#"_bucket{le="\#($0)"}"#, "\($1)") }
        samples += [(#"_bucket{le="+Inf"}"#, "\(h.count)"), ("_sum", "\(h.sum)"), ("_count", "\(h.count)")]
        text += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        for (suffix, value) in samples { text += "\(name)\(suffix) \(value)\n" }
    }
}
