import CAV
import Core
import Imaging

extension ImageFile {
    /// Writes `seconds` of a tone in Matroska, by FFmpeg's encoders: a file with sound and
    /// no picture, which only the tests need (the service never writes one).
    public static func writeAudioOnly(to path: String, seconds: Double) throws(ImagingError) {
        guard cav_write_audio(path, seconds) == 0 else {
            throw ImagingError(.encode, AspectError(.internalError, "writing the audio file \(path) failed"))
        }
    }
}
