// Within the CAV shim only: the one loop that turns RGB frames into a muxed stream.
#ifndef CAV_FRAMES_H
#define CAV_FRAMES_H

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

/// Encodes `count` RGB24 frames of width × height, the i-th at starts[i] in the encoder's
/// time base (NULL: i) lasting durations[i] (NULL: one tick), writes every packet and
/// flushes the encoder. The header is written already; the trailer is the caller's.
int cav__encode_frames(AVFormatContext *out, AVCodecContext *c, AVStream *stream, const uint8_t *rgb, int count,
                       int width, int height, const int64_t *starts, const int *durations);

#endif
