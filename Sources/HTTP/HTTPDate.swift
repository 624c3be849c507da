/// IMF-fixdate (`Wed, 02 Dec 2026 15:04:05 GMT`) from seconds since 1970, with no
/// Foundation: the server formats one per second at most.
public enum HTTPDate {
    static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    public static func format(epochSeconds t: Int) -> String {
        let dayNumber = t >= 0 ? t / 86_400 : (t - 86_399) / 86_400
        let secs = t - dayNumber * 86_400
        let (y, m, d) = civil(fromDays: dayNumber)
        let weekday = days[((dayNumber % 7) + 7) % 7]
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return
            "\(weekday), \(two(d)) \(months[m - 1]) \(y) \(two(secs / 3600)):\(two(secs / 60 % 60)):\(two(secs % 60)) GMT"
    }

    /// Days since 1970-01-01 to year, month, day (Howard Hinnant's civil_from_days).
    static func civil(fromDays z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
