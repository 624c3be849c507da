import Foundation

/// Writing to standard error.
enum Console {
    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// `text` as it is (a progress line redrawn with `\r` has no newline).
    static func write(stderr text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
