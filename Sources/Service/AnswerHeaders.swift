import Core
import HTTP
import Stores
import Synchronization

/// The headers of an answer before its content type is known: the common ones, and for
/// an imgproxy URL the disposition, whose extension is the content type's (made once per
/// format here, on the way to the memo, not on every hit).
struct AnswerHeaders: Sendable {
    let common: HTTPHeaders
    /// `Content-Disposition` by content type.
    let dispositions: [(contentType: String, value: String)]
    /// The last hit's fields, by the kind of result they were made for: one entry's
    /// results are all of one kind, so a hit's fields are made (and put in their wire
    /// form) once, not on every hit.
    private let hits = HitFields()

    final class HitFields: Sendable {
        let last = Mutex<(kind: String, headers: HTTPHeaders)?>(nil)
    }

    init(common: HTTPHeaders, disposition: Disposition?) {
        self.common = common
        dispositions =
            disposition.map { d in ImageFormat.allCases.map { ($0.mimeType, d.value(contentType: $0.mimeType)) } }
            ?? []
    }

    /// A hit's fields for a result of `kind` (`ResultKind`).
    func hit(kind: String) -> HTTPHeaders {
        if let made = hits.last.withLock({ $0 }), made.kind == kind { return made.headers }
        let h = complete(
            contentType: ResultKind.contentType(kind), cache: "HIT", quality: ResultKind.quality(kind),
            chosen: ResultKind.chosen(kind)
        ).prepared()
        hits.last.withLock { $0 = (kind, h) }
        return h
    }

    func complete(contentType: String, cache: String, quality: Int? = nil, chosen: BestChoice? = nil) -> HTTPHeaders {
        var h = common
        h.append("Content-Type", contentType)
        h.append("X-Cache", cache)
        if let quality { h.append("X-Quality", String(quality)) }
        if let chosen { h.append("X-Format-Chosen", chosen.name) }
        if let d = dispositions.first(where: { $0.contentType == contentType }) {
            h.append("Content-Disposition", d.value)
        }
        return h
    }
}
