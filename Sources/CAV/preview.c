// A preview as a short video in memory (SPEC: Video, "Previews as video"): RGB frames with
// their own durations to H.264 in MP4 (the index moved before the data, as +faststart
// does) or VP9 in WebM, no audio, written to a buffer that grows to at most a limit. The
// encoders run on the calling thread alone, and nothing opens a file: the MP4 muxer's
// second pass reads the same buffer back through the format's io_open.
#include "CAV.h"
#include "frames.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint8_t *data;
    size_t size, capacity, limit;
} growing;

typedef struct {
    growing *buffer;
    size_t position;
} cursor;

static int cursor_read(void *opaque, uint8_t *out, int n) {
    cursor *c = opaque;
    if (n <= 0 || c->position >= c->buffer->size)
        return AVERROR_EOF;
    size_t left = c->buffer->size - c->position;
    size_t k = (size_t)n < left ? (size_t)n : left;
    memcpy(out, c->buffer->data + c->position, k);
    c->position += k;
    return (int)k;
}

static int cursor_write(void *opaque, uint8_t *in, int n) {
    cursor *c = opaque;
    growing *b = c->buffer;
    if (n < 0 || c->position > b->limit || (size_t)n > b->limit - c->position)
        return AVERROR(ENOMEM);
    size_t end = c->position + (size_t)n;
    if (end > b->capacity) {
        size_t capacity = b->capacity ? b->capacity : 65536;
        while (capacity < end)
            capacity *= 2;
        uint8_t *grown = realloc(b->data, capacity);
        if (!grown)
            return AVERROR(ENOMEM);
        b->data = grown;
        b->capacity = capacity;
    }
    // A seek past the end leaves a gap: zeros, as a file would read.
    if (c->position > b->size)
        memset(b->data + b->size, 0, c->position - b->size);
    memcpy(b->data + c->position, in, (size_t)n);
    c->position = end;
    if (end > b->size)
        b->size = end;
    return n;
}

static int64_t cursor_seek(void *opaque, int64_t offset, int whence) {
    cursor *c = opaque;
    if (whence & AVSEEK_SIZE)
        return (int64_t)c->buffer->size;
    whence &= ~AVSEEK_FORCE;
    int64_t base = whence == SEEK_CUR ? (int64_t)c->position : whence == SEEK_END ? (int64_t)c->buffer->size : 0;
    if ((whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) || offset < -base ||
        (uint64_t)(base + offset) > c->buffer->limit)
        return AVERROR(EINVAL);
    c->position = (size_t)(base + offset);
    return base + offset;
}

static AVIOContext *context_over(growing *buffer, int writes) {
    cursor *c = calloc(1, sizeof(cursor));
    unsigned char *io_buffer = av_malloc(65536);
    AVIOContext *io = c && io_buffer ? avio_alloc_context(io_buffer, 65536, writes, c, cursor_read,
                                                          writes ? cursor_write : NULL, cursor_seek)
                                     : NULL;
    if (!io) {
        free(c);
        av_free(io_buffer);
        return NULL;
    }
    c->buffer = buffer;
    return io;
}

static void context_free(AVIOContext **io) {
    if (!*io)
        return;
    free((*io)->opaque);
    av_freep(&(*io)->buffer);
    avio_context_free(io);
}

/// The muxer's second pass (faststart) opens its own output again to read it: the buffer.
static int open_again(AVFormatContext *s, AVIOContext **pb, const char *url, int flags, AVDictionary **options) {
    (void)url;
    (void)options;
    if (flags & AVIO_FLAG_WRITE)
        return AVERROR(EPERM);
    *pb = context_over(s->opaque, 0);
    return *pb ? 0 : AVERROR(ENOMEM);
}

static int close_again(AVFormatContext *s, AVIOContext *pb) {
    (void)s;
    context_free(&pb);
    return 0;
}

/// Sends `frame` (NULL: the end) and writes what comes out, each packet lasting the
/// duration its frame was given (`durations`, by the frame's start), or one tick.
static int encode_frame(AVFormatContext *out, AVCodecContext *c, AVStream *stream, AVFrame *frame,
                        const int64_t *starts, const int *durations, int count) {
    if (avcodec_send_frame(c, frame) < 0)
        return -1;
    AVPacket *packet = av_packet_alloc();
    if (!packet)
        return -1;
    int r;
    while ((r = avcodec_receive_packet(c, packet)) == 0) {
        for (int i = 0; starts && durations && i < count; i++)
            if (starts[i] == packet->pts)
                packet->duration = durations[i] > 0 ? durations[i] : 100;
        // Each frame lasts at least a tick, the last one too: the container's duration is
        // then the clip's whole length.
        if (packet->duration == 0)
            packet->duration = 1;
        av_packet_rescale_ts(packet, c->time_base, stream->time_base);
        packet->stream_index = stream->index;
        if (av_interleaved_write_frame(out, packet) < 0) {
            av_packet_free(&packet);
            return -1;
        }
    }
    av_packet_free(&packet);
    return r == AVERROR(EAGAIN) || r == AVERROR_EOF ? 0 : -1;
}

int cav__encode_frames(AVFormatContext *out, AVCodecContext *c, AVStream *stream, const uint8_t *rgb, int count,
                       int width, int height, const int64_t *starts, const int *durations) {
    int result = -1;
    AVFrame *frame = av_frame_alloc();
    struct SwsContext *sws = sws_getContext(width, height, AV_PIX_FMT_RGB24, width, height, AV_PIX_FMT_YUV420P,
                                            SWS_BILINEAR, NULL, NULL, NULL);
    if (!frame || !sws)
        goto done;
    frame->format = AV_PIX_FMT_YUV420P;
    frame->width = width;
    frame->height = height;
    if (av_frame_get_buffer(frame, 0) < 0)
        goto done;
    for (int i = 0; i < count; i++) {
        if (av_frame_make_writable(frame) < 0)
            goto done;
        // swscale reads four planes and strides whatever the format uses.
        const uint8_t *planes[4] = {rgb + (size_t)i * (size_t)width * (size_t)height * 3, NULL, NULL, NULL};
        int strides[4] = {width * 3, 0, 0, 0};
        if (sws_scale(sws, planes, strides, 0, height, frame->data, frame->linesize) != height)
            goto done;
        frame->pts = starts ? starts[i] : i;
        if (encode_frame(out, c, stream, frame, starts, durations, count) < 0)
            goto done;
    }
    result = encode_frame(out, c, stream, NULL, starts, durations, count);
done:
    sws_freeContext(sws);
    av_frame_free(&frame);
    return result;
}

static int set_encoder(AVCodecContext *c, int webm) {
    c->thread_count = 1;
    c->max_b_frames = 0;
    c->gop_size = 250;
    if (webm) {
        // Constant quality (no bitrate target), the encoder's "good" pass at a speed that
        // keeps a preview's encode near its frames' decode.
        c->bit_rate = 0;
        return av_opt_set_int(c->priv_data, "crf", 33, 0) < 0 || av_opt_set(c->priv_data, "deadline", "good", 0) < 0 ||
               av_opt_set_int(c->priv_data, "cpu-used", 5, 0) < 0 || av_opt_set_int(c->priv_data, "row-mt", 0, 0) < 0;
    }
    return av_opt_set(c->priv_data, "preset", "veryfast", 0) < 0 || av_opt_set_int(c->priv_data, "crf", 23, 0) < 0 ||
           av_opt_set(c->priv_data, "x264-params", "threads=1:lookahead-threads=1:sliced-threads=0", 0) < 0;
}

int cav_encode_preview(int webm, const uint8_t *rgb, int count, int width, int height, const int *durations_ms,
                       size_t max_bytes, uint8_t **out_bytes, size_t *out_length) {
    *out_bytes = NULL;
    *out_length = 0;
    if (count < 1 || width < 2 || height < 2 || (width | height) & 1 || width > 16384 || height > 16384)
        return -1;
    const AVCodec *encoder = avcodec_find_encoder_by_name(webm ? "libvpx-vp9" : "libx264");
    growing buffer = {.limit = max_bytes};
    AVFormatContext *out = NULL;
    if (!encoder || avformat_alloc_output_context2(&out, NULL, webm ? "webm" : "mp4", webm ? "p.webm" : "p.mp4") < 0 ||
        !out)
        return -1;
    int result = -1;
    int64_t *starts = calloc((size_t)count, sizeof(int64_t));
    AVCodecContext *c = avcodec_alloc_context3(encoder);
    AVStream *stream = avformat_new_stream(out, NULL);
    AVDictionary *options = NULL;
    if (!starts || !c || !stream)
        goto done;
    int64_t t = 0;
    for (int i = 0; i < count; i++) {
        starts[i] = t;
        t += durations_ms[i] > 0 ? durations_ms[i] : 100;
    }
    c->width = width;
    c->height = height;
    c->time_base = (AVRational){1, 1000};
    c->framerate = (AVRational){1000, durations_ms[0] > 0 ? durations_ms[0] : 100};
    c->pix_fmt = AV_PIX_FMT_YUV420P;
    if (out->oformat->flags & AVFMT_GLOBALHEADER)
        c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if (set_encoder(c, webm) || avcodec_open2(c, encoder, NULL) < 0 ||
        avcodec_parameters_from_context(stream->codecpar, c) < 0)
        goto done;
    stream->time_base = c->time_base;
    out->opaque = &buffer;
    out->io_open = open_again;
    out->io_close2 = close_again;
    out->pb = context_over(&buffer, 1);
    if (!out->pb || (!webm && av_dict_set(&options, "movflags", "+faststart", 0) < 0) ||
        avformat_write_header(out, &options) < 0)
        goto done;
    if (cav__encode_frames(out, c, stream, rgb, count, width, height, starts, durations_ms) < 0 ||
        av_write_trailer(out) < 0)
        goto done;
    avio_flush(out->pb);
    *out_bytes = buffer.data;
    *out_length = buffer.size;
    buffer.data = NULL;
    result = 0;
done:
    av_dict_free(&options);
    avcodec_free_context(&c);
    context_free(&out->pb);
    avformat_free_context(out);
    free(starts);
    free(buffer.data);
    return result;
}

int cav_count(int fd, int *video_frames, int *audio_streams, int *width, int *height, double *seconds, char *codec,
              size_t codec_size) {
    AVFormatContext *format = NULL;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    if (avformat_open_input(&format, path, NULL, NULL) < 0)
        return -1;
    int result = -1;
    if (avformat_find_stream_info(format, NULL) < 0)
        goto done;
    int video = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    if (video < 0)
        goto done;
    *audio_streams = 0;
    for (unsigned i = 0; i < format->nb_streams; i++)
        if (format->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_AUDIO)
            (*audio_streams)++;
    AVCodecParameters *p = format->streams[video]->codecpar;
    *seconds = format->duration > 0 ? (double)format->duration / AV_TIME_BASE : 0;
    *width = p->width;
    *height = p->height;
    snprintf(codec, codec_size, "%s", avcodec_get_name(p->codec_id));
    *video_frames = 0;
    AVPacket *packet = av_packet_alloc();
    if (!packet)
        goto done;
    while (av_read_frame(format, packet) == 0) {
        if (packet->stream_index == video)
            (*video_frames)++;
        av_packet_unref(packet);
    }
    av_packet_free(&packet);
    result = 0;
done:
    avformat_close_input(&format);
    return result;
}
