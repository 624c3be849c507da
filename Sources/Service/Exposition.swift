/// Observations counted into fixed buckets, as a Prometheus histogram keeps them: each
/// bucket counts the observations at most its bound, with the count and sum of all.
struct Histogram: Sendable {
    let bounds: [Double]
    private(set) var buckets: [Int]
    private(set) var count = 0
    private(set) var sum = 0.0

    init(bounds: [Double]) {
        self.bounds = bounds
        buckets = [Int](repeating: 0, count: bounds.count)
    }

    mutating func observe(_ value: Double) {
        count += 1
        sum += value
        for (i, b) in bounds.enumerated() where value <= b { buckets[i] += 1 }
    }
}

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
