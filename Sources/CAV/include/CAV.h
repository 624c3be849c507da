// FFmpeg's libraries (libavformat, libavcodec, libswscale) behind fixed-arity calls: open
// a video from a descriptor, read its stream facts, decode the frame shown at a moment to
// RGB; and, for the samples and the tests, write a clip. Only the MP4/MOV and Matroska/WebM
// demuxers are allowed, every other file or URL a demuxer would open is refused, and the
// decoders run on the calling thread alone.
#ifndef CAV_H
#define CAV_H

#include <stddef.h>
#include <stdint.h>

typedef struct cav_video cav_video;

/// What a video's header says.
typedef struct {
    /// The stored frame size, before the rotation.
    int width, height;
    /// Clockwise degrees the stored frames are turned by to show upright: 0, 90, 180, 270.
    int rotation;
    /// Seconds; 0 when the container does not say.
    double duration;
    double fps;
    /// The decoder's short name: h264, vp9, hevc, av1, …
    char codec[32];
} cav_facts;

/// Results other than 0.
enum {
    /// Not a video FFmpeg opens: no video stream, corrupt, or a demuxer not allowed.
    CAV_UNSUPPORTED = -1,
    /// The frame lies more than max_decode_seconds of video after the keyframe before it.
    CAV_TOO_FAR = -2,
    /// The deadline passed.
    CAV_DEADLINE = -3,
};

/// Opens the video in an open file (the caller keeps the descriptor open until
/// cav_close) and reads its facts. NULL with *error set on failure.
cav_video *cav_open(int fd, unsigned long long deadline_ns, cav_facts *facts, int *error);
void cav_close(cav_video *video);

/// The frame shown at `seconds` from the start: from the keyframe at or before it, decoded
/// forward to the first frame at or after it (the last frame when the stream ends first),
/// as RGB24 at the stored size into *rgb (malloc'd: free it), row by row. Decoding more
/// than max_decode_seconds of video past that keyframe is CAV_TOO_FAR; the deadline (on
/// CLOCK_MONOTONIC, 0 none) is checked between packets.
int cav_frame(cav_video *video, double seconds, double max_decode_seconds, unsigned long long deadline_ns,
              uint8_t **rgb);

/// Writes a clip of `count` RGB24 frames of width × height at `fps` with the encoder
/// `codec` (libx264, libvpx-vp9, mpeg4, …), a keyframe every `gop` frames, and a display
/// matrix that turns it `rotation` degrees clockwise (0: none); the container from the
/// path's extension (.mp4, .mov, .webm, .mkv). 0, or -1.
int cav_write_clip(const char *path, const char *codec, const uint8_t *rgb, int count, int width, int height,
                   int fps, int gop, int rotation);

/// A preview as a video in memory: `count` RGB24 frames of width × height (both even), the
/// i-th shown durations_ms[i] ms, to H.264 (x264, CRF 23, yuv420p) in MP4 with the index
/// before the data, or with `webm` to VP9 (libvpx, CRF 33) in WebM; no audio. The result
/// is malloc'd into *bytes (free it), at most max_bytes long. 0, or -1.
int cav_encode_preview(int webm, const uint8_t *rgb, int count, int width, int height, const int *durations_ms,
                       size_t max_bytes, uint8_t **bytes, size_t *length);

/// For the tests: what FFmpeg reads of a file: its video stream's packets (a frame each
/// for these encoders), audio streams, size, duration and codec name. 0, or -1.
int cav_count(int fd, int *video_frames, int *audio_streams, int *width, int *height, double *seconds, char *codec,
              size_t codec_size);

/// Writes `seconds` of a 440 Hz tone as PCM in Matroska: a file with no video stream.
int cav_write_audio(const char *path, double seconds);

#endif
