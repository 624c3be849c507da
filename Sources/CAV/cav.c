#include "CAV.h"
#include "frames.h"

#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct cav_video {
    int fd;
    int64_t position;
    int64_t size;
    unsigned long long deadline_ns;
    int expired;
    AVIOContext *io;
    AVFormatContext *format;
    AVCodecContext *codec;
    int stream;
    int width, height;
};

/// The demuxers a source may reach: MP4/MOV/M4V and Matroska/WebM, nothing else (no
/// playlists, no image sequences, no network protocols).
static const char *allowed_demuxers = "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm";

static unsigned long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static int passed(unsigned long long deadline_ns) { return deadline_ns && now_ns() > deadline_ns; }

static void quiet_once(void) { av_log_set_level(AV_LOG_QUIET); }
static pthread_once_t quieted = PTHREAD_ONCE_INIT;

static int io_read(void *opaque, uint8_t *buffer, int size) {
    cav_video *v = opaque;
    if (passed(v->deadline_ns)) {
        v->expired = 1;
        return AVERROR(ETIMEDOUT);
    }
    for (;;) {
        ssize_t n = pread(v->fd, buffer, (size_t)size, (off_t)v->position);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return AVERROR(errno);
        if (n == 0)
            return AVERROR_EOF;
        v->position += n;
        return (int)n;
    }
}

static int64_t io_seek(void *opaque, int64_t offset, int whence) {
    cav_video *v = opaque;
    if (whence & AVSEEK_SIZE)
        return v->size;
    whence &= ~AVSEEK_FORCE;
    int64_t target = whence == SEEK_SET   ? offset
                     : whence == SEEK_CUR ? v->position + offset
                     : whence == SEEK_END ? v->size + offset
                                          : -1;
    if (target < 0)
        return AVERROR(EINVAL);
    v->position = target;
    return target;
}

/// A demuxer asking to open another file or URL (a MOV's external data reference, say).
static int refuse_open(struct AVFormatContext *s, AVIOContext **pb, const char *url, int flags,
                       AVDictionary **options) {
    (void)s, (void)pb, (void)url, (void)flags, (void)options;
    return AVERROR(EPERM);
}

void cav_close(cav_video *v) {
    if (!v)
        return;
    avcodec_free_context(&v->codec);
    avformat_close_input(&v->format);
    if (v->io) {
        av_freep(&v->io->buffer);
        avio_context_free(&v->io);
    }
    free(v);
}

static int clockwise_rotation(AVStream *stream) {
    const int32_t *matrix = (const int32_t *)av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, NULL);
    if (!matrix)
        return 0;
    double degrees = -av_display_rotation_get(matrix);
    if (isnan(degrees))
        return 0;
    int quarter = (int)lround(degrees / 90.0) % 4;
    return (quarter < 0 ? quarter + 4 : quarter) * 90;
}

cav_video *cav_open(int fd, unsigned long long deadline_ns, cav_facts *facts, int *error) {
    pthread_once(&quieted, quiet_once);
    *error = CAV_UNSUPPORTED;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return NULL;
    cav_video *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->fd = fd;
    v->size = st.st_size;
    v->deadline_ns = deadline_ns;
    v->stream = -1;
    unsigned char *buffer = av_malloc(65536);
    v->io = buffer ? avio_alloc_context(buffer, 65536, 0, v, io_read, NULL, io_seek) : NULL;
    v->format = avformat_alloc_context();
    if (!v->io || !v->format) {
        if (!v->io)
            av_free(buffer);
        cav_close(v);
        return NULL;
    }
    v->format->pb = v->io;
    v->format->flags |= AVFMT_FLAG_CUSTOM_IO;
    v->format->format_whitelist = av_strdup(allowed_demuxers);
    v->format->io_open = refuse_open;
    // On failure avformat_open_input frees the context itself.
    if (avformat_open_input(&v->format, NULL, NULL, NULL) < 0 || avformat_find_stream_info(v->format, NULL) < 0)
        goto fail;
    const AVCodec *decoder = NULL;
    v->stream = av_find_best_stream(v->format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
    if (v->stream < 0 || !decoder)
        goto fail;
    AVStream *stream = v->format->streams[v->stream];
    v->codec = avcodec_alloc_context3(decoder);
    if (!v->codec || avcodec_parameters_to_context(v->codec, stream->codecpar) < 0)
        goto fail;
    // One thread: the service's workers are its parallelism.
    v->codec->thread_count = 1;
    if (avcodec_open2(v->codec, decoder, NULL) < 0)
        goto fail;
    v->width = stream->codecpar->width;
    v->height = stream->codecpar->height;
    if (v->width <= 0 || v->height <= 0)
        goto fail;
    memset(facts, 0, sizeof *facts);
    facts->width = v->width;
    facts->height = v->height;
    facts->rotation = clockwise_rotation(stream);
    if (v->format->duration > 0)
        facts->duration = (double)v->format->duration / AV_TIME_BASE;
    else if (stream->duration > 0)
        facts->duration = (double)stream->duration * av_q2d(stream->time_base);
    AVRational rate = av_guess_frame_rate(v->format, stream, NULL);
    facts->fps = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 0;
    snprintf(facts->codec, sizeof facts->codec, "%s", avcodec_get_name(stream->codecpar->codec_id));
    *error = 0;
    return v;
fail:
    if (v->expired)
        *error = CAV_DEADLINE;
    cav_close(v);
    return NULL;
}

/// The frame as RGB24 at the stream's stored size, into a new buffer.
static int to_rgb(cav_video *v, AVFrame *frame, uint8_t **rgb) {
    struct SwsContext *sws = sws_getContext(frame->width, frame->height, frame->format, v->width, v->height,
                                            AV_PIX_FMT_RGB24, SWS_BILINEAR, NULL, NULL, NULL);
    if (!sws)
        return CAV_UNSUPPORTED;
    uint8_t *out = malloc((size_t)v->width * (size_t)v->height * 3);
    if (!out) {
        sws_freeContext(sws);
        return CAV_UNSUPPORTED;
    }
    uint8_t *planes[4] = {out, NULL, NULL, NULL};
    int strides[4] = {v->width * 3, 0, 0, 0};
    int rows = sws_scale(sws, (const uint8_t *const *)frame->data, frame->linesize, 0, frame->height, planes, strides);
    sws_freeContext(sws);
    if (rows != v->height) {
        free(out);
        return CAV_UNSUPPORTED;
    }
    *rgb = out;
    return 0;
}

int cav_frame(cav_video *v, double seconds, double max_decode_seconds, unsigned long long deadline_ns,
              uint8_t **rgb) {
    v->deadline_ns = deadline_ns;
    AVStream *stream = v->format->streams[v->stream];
    double unit = av_q2d(stream->time_base);
    if (unit <= 0)
        return CAV_UNSUPPORTED;
    int64_t start = stream->start_time != AV_NOPTS_VALUE ? stream->start_time : 0;
    int64_t target = start + (int64_t)llround(seconds / unit);
    if (av_seek_frame(v->format, v->stream, target, AVSEEK_FLAG_BACKWARD) < 0)
        av_seek_frame(v->format, v->stream, start, AVSEEK_FLAG_BACKWARD);
    avcodec_flush_buffers(v->codec);
    AVPacket *packet = av_packet_alloc();
    AVFrame *frame = av_frame_alloc(), *kept = av_frame_alloc();
    int result = CAV_UNSUPPORTED, have = 0, done = 0, drained = 0;
    double first = NAN, last = 0;
    // Half a microsecond of slack: a frame stamped 0.9999999 s is the one at 1 s.
    const double slack = 5e-7;
    while (packet && frame && kept && !done) {
        if (passed(deadline_ns) || v->expired) {
            result = CAV_DEADLINE;
            break;
        }
        if (!drained) {
            int r = av_read_frame(v->format, packet);
            if (r < 0) {
                if (v->expired) {
                    result = CAV_DEADLINE;
                    break;
                }
                drained = 1;
                avcodec_send_packet(v->codec, NULL);
            } else {
                // A packet the decoder refuses (a damaged one) is skipped; a stream with no
                // decodable frame at all ends as unsupported.
                if (packet->stream_index == v->stream)
                    avcodec_send_packet(v->codec, packet);
                av_packet_unref(packet);
            }
        }
        int r;
        while ((r = avcodec_receive_frame(v->codec, frame)) == 0) {
            int64_t pts = frame->best_effort_timestamp;
            double time = pts == AV_NOPTS_VALUE ? last : (double)(pts - start) * unit;
            if (isnan(first))
                first = time;
            last = time;
            av_frame_unref(kept);
            av_frame_move_ref(kept, frame);
            have = 1;
            if (time + slack >= seconds) {
                done = 1;
                break;
            }
            if (time - first > max_decode_seconds) {
                result = CAV_TOO_FAR;
                have = 0;
                done = 1;
                break;
            }
        }
        if (drained && r != 0)
            break;
    }
    if (have && result != CAV_DEADLINE)
        result = to_rgb(v, kept, rgb);
    av_packet_free(&packet);
    av_frame_free(&frame);
    av_frame_free(&kept);
    return result;
}

int cav_write_clip(const char *path, const char *codec, const uint8_t *rgb, int count, int width, int height,
                   int fps, int gop, int rotation) {
    pthread_once(&quieted, quiet_once);
    AVFormatContext *out = NULL;
    const AVCodec *encoder = avcodec_find_encoder_by_name(codec);
    if (!encoder || avformat_alloc_output_context2(&out, NULL, NULL, path) < 0 || !out)
        return -1;
    int result = -1;
    AVCodecContext *c = avcodec_alloc_context3(encoder);
    AVStream *stream = avformat_new_stream(out, NULL);
    if (!c || !stream)
        goto done;
    c->width = width;
    c->height = height;
    c->time_base = (AVRational){1, fps};
    c->framerate = (AVRational){fps, 1};
    c->gop_size = gop;
    c->max_b_frames = 0;
    c->pix_fmt = AV_PIX_FMT_YUV420P;
    c->thread_count = 1;
    if (out->oformat->flags & AVFMT_GLOBALHEADER)
        c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if (strcmp(codec, "libx264") == 0) {
        // No keyframe at a scene change: a clip's keyframes are where `gop` puts them.
        av_opt_set(c->priv_data, "preset", "ultrafast", 0);
        av_opt_set(c->priv_data, "x264-params", "scenecut=0", 0);
    } else if (strcmp(codec, "libvpx-vp9") == 0) {
        av_opt_set(c->priv_data, "deadline", "realtime", 0);
        av_opt_set_int(c->priv_data, "cpu-used", 8, 0);
    }
    if (avcodec_open2(c, encoder, NULL) < 0 || avcodec_parameters_from_context(stream->codecpar, c) < 0)
        goto done;
    stream->time_base = c->time_base;
    if (rotation) {
        uint8_t *matrix = av_stream_new_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, 9 * sizeof(int32_t));
        if (!matrix)
            goto done;
        // av_display_rotation_set's angle runs the other way from av_display_rotation_get's:
        // this is the matrix a phone writes for a clip shown turned `rotation` clockwise.
        av_display_rotation_set((int32_t *)matrix, rotation);
    }
    if (avio_open(&out->pb, path, AVIO_FLAG_WRITE) < 0)
        goto done;
    if (avformat_write_header(out, NULL) < 0)
        goto done;
    if (cav__encode_frames(out, c, stream, rgb, count, width, height, NULL, NULL) < 0 || av_write_trailer(out) < 0)
        goto done;
    result = 0;
done:
    avcodec_free_context(&c);
    if (out->pb)
        avio_closep(&out->pb);
    avformat_free_context(out);
    return result;
}

int cav_write_audio(const char *path, double seconds) {
    AVFormatContext *out = NULL;
    if (avformat_alloc_output_context2(&out, NULL, "matroska", path) < 0 || !out)
        return -1;
    int result = -1;
    const int rate = 8000;
    AVStream *stream = avformat_new_stream(out, NULL);
    AVPacket *packet = av_packet_alloc();
    if (!stream || !packet)
        goto done;
    stream->codecpar->codec_type = AVMEDIA_TYPE_AUDIO;
    stream->codecpar->codec_id = AV_CODEC_ID_PCM_S16LE;
    stream->codecpar->sample_rate = rate;
    stream->codecpar->format = AV_SAMPLE_FMT_S16;
    stream->codecpar->bits_per_coded_sample = 16;
    av_channel_layout_default(&stream->codecpar->ch_layout, 1);
    stream->time_base = (AVRational){1, rate};
    if (avio_open(&out->pb, path, AVIO_FLAG_WRITE) < 0 || avformat_write_header(out, NULL) < 0)
        goto done;
    int total = (int)(seconds * rate);
    for (int at = 0; at < total; at += rate / 10) {
        int n = total - at < rate / 10 ? total - at : rate / 10;
        if (av_new_packet(packet, n * 2) < 0)
            goto done;
        int16_t *samples = (int16_t *)packet->data;
        for (int i = 0; i < n; i++)
            samples[i] = (int16_t)(8000 * sin(2 * M_PI * 440 * (at + i) / rate));
        packet->pts = packet->dts = at;
        packet->duration = n;
        packet->stream_index = stream->index;
        av_packet_rescale_ts(packet, (AVRational){1, rate}, stream->time_base);
        if (av_interleaved_write_frame(out, packet) < 0)
            goto done;
    }
    if (av_write_trailer(out) < 0)
        goto done;
    result = 0;
done:
    av_packet_free(&packet);
    if (out->pb)
        avio_closep(&out->pb);
    avformat_free_context(out);
    return result;
}
