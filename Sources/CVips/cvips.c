#include "CVips.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int cvips_start(const char *argv0) {
    if (VIPS_INIT(argv0))
        return -1;
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    vips_concurrency_set(1);
    return 0;
}

static cvips_log_sink log_sink;

/// GLib's levels as the sink's: 3 error, 2 warning, 1 info, 0 debug. GLib's "info" is
/// chatty in libvips (per-operation notes), so it counts as debug.
static int sink_level(GLogLevelFlags level) {
    if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL))
        return 3;
    if (level & G_LOG_LEVEL_WARNING)
        return 2;
    if (level & G_LOG_LEVEL_MESSAGE)
        return 1;
    return 0;
}

static void on_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)data;
    if (log_sink)
        log_sink(sink_level(level), domain, message);
}

void cvips_route_log(cvips_log_sink sink, int include_debug) {
    static int routed;
    log_sink = sink;
    if (routed)
        return;
    routed = 1;
    // Per domain and for the levels wanted only, and no writer function of ours: GLib
    // then drops debug and info messages on its own fast path. A default handler and a
    // writer function of ours (every level, every domain) cost 10-20% of the misses a
    // second under concurrency, with the same instruction count: GLib's log takes a
    // process-wide lock, and libvips logs a dozen debug lines per thumbnail.
    GLogLevelFlags levels = G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE |
                            G_LOG_FLAG_FATAL | G_LOG_FLAG_RECURSION;
    if (include_debug)
        levels |= G_LOG_LEVEL_INFO | G_LOG_LEVEL_DEBUG;
    static const char *domains[] = {"VIPS", "GLib", "GLib-GObject", "GLib-GIO", "GModule"};
    for (size_t i = 0; i < sizeof domains / sizeof domains[0]; i++)
        g_log_set_handler(domains[i], levels, on_log, NULL);
    g_log_set_handler(NULL, levels, on_log, NULL);
}

typedef struct {
    int fd;
    gint64 position;
    gint64 size;
    guint64 deadline_ns;
    int expired;
} cvips_file;

unsigned long long cvips_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (guint64)ts.tv_sec * 1000000000ull + (guint64)ts.tv_nsec;
}

static gint64 cvips_file_read(VipsSourceCustom *source, void *buffer, gint64 length, void *user) {
    (void)source;
    cvips_file *f = user;
    if (f->deadline_ns && cvips_now_ns() > f->deadline_ns) {
        f->expired = 1;
        vips_error("aspect", "processing took longer than its deadline");
        return -1;
    }
    for (;;) {
        ssize_t n = pread(f->fd, buffer, (size_t)length, (off_t)f->position);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        f->position += n;
        return n;
    }
}

static gint64 cvips_file_seek(VipsSourceCustom *source, gint64 offset, int whence, void *user) {
    (void)source;
    cvips_file *f = user;
    gint64 target = whence == SEEK_SET ? offset : whence == SEEK_CUR ? f->position + offset : f->size + offset;
    if (target < 0)
        return -1;
    f->position = target;
    return target;
}

VipsSource *cvips_source_new(int fd, unsigned long long deadline_ns) {
    struct stat st;
    if (fstat(fd, &st) != 0)
        return NULL;
    VipsSourceCustom *source = vips_source_custom_new();
    if (!source)
        return NULL;
    cvips_file *f = g_new0(cvips_file, 1);
    f->fd = fd;
    f->size = st.st_size;
    f->deadline_ns = deadline_ns;
    g_object_set_data_full(G_OBJECT(source), "cvips-file", f, g_free);
    g_signal_connect(source, "read", G_CALLBACK(cvips_file_read), f);
    g_signal_connect(source, "seek", G_CALLBACK(cvips_file_seek), f);
    return VIPS_SOURCE(source);
}

int cvips_source_expired(VipsSource *source) {
    cvips_file *f = g_object_get_data(G_OBJECT(source), "cvips-file");
    return f && f->expired;
}

void cvips_restrict_loaders(const char *const *allowed, int count) {
    vips_operation_block_set("VipsForeignLoad", TRUE);
    for (int i = 0; i < count; i++) vips_operation_block_set(allowed[i], FALSE);
}

const char *cvips_find_loader(VipsSource *source) { return vips_foreign_find_load_source(source); }

int cvips_open_header(VipsSource *source, int page, int thumbnail, VipsImage **out) {
    char options[48] = "";
    if (page > 0)
        g_snprintf(options, sizeof options, "page=%d", page);
    if (thumbnail)
        g_strlcat(options, options[0] ? ",thumbnail=true" : "thumbnail=true", sizeof options);
    *out = vips_image_new_from_source(source, options, "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    return *out ? 0 : -1;
}

// export_srgb: an embedded RGB (or grey) profile is imported and the pixels converted to
// sRGB. Without it, libvips 8.14's thumbnail converts only CMYK (and sources it must
// import anyway) and leaves RGB pixels in their own space.
/// vips_thumbnail_source to exactly width × height, with the loader's options.
static int thumbnail_forced(VipsSource *source, VipsImage **out, int width, int height, int fail_on, int export_srgb,
                            const char *options, int no_rotate) {
    if (export_srgb)
        return vips_thumbnail_source(source, out, width, "height", height, "size", VIPS_SIZE_FORCE, "fail_on",
                                     fail_on, "option_string", options, "export_profile", "srgb", "no_rotate",
                                     no_rotate, NULL);
    return vips_thumbnail_source(source, out, width, "height", height, "size", VIPS_SIZE_FORCE, "fail_on", fail_on,
                                 "option_string", options, "no_rotate", no_rotate, NULL);
}

/// `loaded` resized to exactly width × height by vips_thumbnail_image, with the same
/// rotation and colour handling as thumbnail_forced; `loaded` is released.
static int thumbnail_loaded(VipsImage *loaded, VipsImage **out, int width, int height, int export_srgb,
                            int no_rotate) {
    int r = export_srgb ? vips_thumbnail_image(loaded, out, width, "height", height, "size", VIPS_SIZE_FORCE,
                                               "export_profile", "srgb", "no_rotate", no_rotate, NULL)
                        : vips_thumbnail_image(loaded, out, width, "height", height, "size", VIPS_SIZE_FORCE,
                                               "no_rotate", no_rotate, NULL);
    g_object_unref(loaded);
    return r;
}

/// A loader's option string: `fail_on=error` (libvips 8.14 does not pass thumbnail's
/// fail_on to a source's loader) and the page, from 0 (left out when 0: not every loader
/// has one).
static void load_options(char *options, size_t size, int fail_on, int page) {
    if (fail_on == VIPS_FAIL_ON_ERROR)
        g_strlcat(options, "fail_on=error", size);
    if (page > 0) {
        char p[24];
        g_snprintf(p, sizeof p, "%spage=%d", options[0] ? "," : "", page);
        g_strlcat(options, p, size);
    }
}

int cvips_thumbnail_force(VipsSource *source, VipsImage **out, int width, int height, int page, int fail_on,
                          int export_srgb, int no_rotate, int thumbnail) {
    char options[64] = "";
    load_options(options, sizeof options, fail_on, page);
    if (!thumbnail)
        return thumbnail_forced(source, out, width, height, fail_on, export_srgb, options, no_rotate);
    // A HEIF's embedded thumbnail, loaded as the image and resized from there: given
    // `thumbnail=true`, vips_thumbnail_source decodes the whole picture again (1.5 s where
    // the thumbnail takes 40 ms on a 20-megapixel source).
    g_strlcat(options, options[0] ? ",thumbnail=true" : "thumbnail=true", sizeof options);
    VipsImage *small = vips_image_new_from_source(source, options, NULL);
    if (!small)
        return -1;
    return thumbnail_loaded(small, out, width, height, export_srgb, no_rotate);
}

int cvips_thumbnail_flattened(VipsSource *source, VipsImage **out, int width, int height, int page, int fail_on,
                              int export_srgb, int no_rotate, const double *background, int n) {
    char options[64] = "";
    load_options(options, sizeof options, fail_on, page);
    VipsImage *loaded = vips_image_new_from_source(source, options, "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (!loaded)
        return -1;
    if (loaded->BandFmt != VIPS_FORMAT_UCHAR || loaded->Bands != 4 || !vips_image_hasalpha(loaded))
        return thumbnail_loaded(loaded, out, width, height, export_srgb, no_rotate);
    VipsImage *flat;
    VipsArrayDouble *bg = vips_array_double_new(background, n);
    int r = vips_flatten(loaded, &flat, "background", bg, NULL);
    vips_area_unref(VIPS_AREA(bg));
    g_object_unref(loaded);
    if (r)
        return -1;
    return thumbnail_loaded(flat, out, width, height, export_srgb, no_rotate);
}

int cvips_thumbnail_animated(VipsSource *source, VipsImage **out, int width, int height, int fail_on,
                             int export_srgb) {
    return thumbnail_forced(source, out, width, height, fail_on, export_srgb,
                            fail_on == VIPS_FAIL_ON_ERROR ? "n=-1,fail_on=error" : "n=-1", 0);
}

int cvips_thumbnail_image_force(VipsImage *in, VipsImage **out, int width, int height) {
    return vips_thumbnail_image(in, out, width, "height", height, "size", VIPS_SIZE_FORCE, NULL);
}

int cvips_embed_copy(VipsImage *in, VipsImage **out, int width, int height) {
    return vips_embed(in, out, 0, 0, width, height, "extend", VIPS_EXTEND_COPY, NULL);
}

int cvips_shrink(VipsImage *in, VipsImage **out, double factor) { return vips_shrink(in, out, factor, factor, NULL); }

int cvips_zoom(VipsImage *in, VipsImage **out, int factor) { return vips_zoom(in, out, factor, factor, NULL); }

int cvips_find_trim(VipsImage *in, double threshold, const double *color, int bottom_right, int *left, int *top,
                    int *width, int *height) {
    // Transparency is flattened onto magenta first, as imgproxy does, so that a
    // transparent border is a border of one colour.
    VipsImage *flat = NULL;
    if (vips_image_hasalpha(in)) {
        VipsArrayDouble *magenta = vips_array_double_newv(3, 255.0, 0.0, 255.0);
        int f = vips_flatten(in, &flat, "background", magenta, NULL);
        vips_area_unref(VIPS_AREA(magenta));
        if (f)
            return -1;
        in = flat;
    }
    VipsArrayDouble *background;
    if (color) {
        background = vips_array_double_newv(3, color[0], color[1], color[2]);
    } else {
        double *corner = NULL;
        int n = 0;
        int x = bottom_right ? in->Xsize - 1 : 0, y = bottom_right ? in->Ysize - 1 : 0;
        if (vips_getpoint(in, &corner, &n, x, y, NULL)) {
            if (flat)
                g_object_unref(flat);
            return -1;
        }
        background = vips_array_double_new(corner, n);
        g_free(corner);
    }
    int r = vips_find_trim(in, left, top, width, height, "threshold", threshold, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    if (flat)
        g_object_unref(flat);
    return r;
}

int cvips_arrayjoin_vertical(VipsImage **in, int n, VipsImage **out) {
    return vips_arrayjoin(in, out, n, "across", 1, NULL);
}

int cvips_arrayjoin_grid(VipsImage **in, int n, int across, VipsImage **out) {
    return vips_arrayjoin(in, out, n, "across", across, NULL);
}

void cvips_get_animation(VipsImage *in, int *page_height, const int **delay, int *n_delay, int *loop) {
    *page_height = vips_image_get_page_height(in);
    if (*page_height == in->Ysize) *page_height = 0;
    int *d = NULL;
    *n_delay = 0;
    if (vips_image_get_typeof(in, "delay") && vips_image_get_array_int(in, "delay", &d, n_delay) == 0)
        *delay = d;
    else
        *delay = NULL, *n_delay = 0;
    *loop = 0;
    if (vips_image_get_typeof(in, "loop")) vips_image_get_int(in, "loop", loop);
}

void cvips_set_animation(VipsImage *in, int page_height, const int *delay, int n_delay, int loop) {
    vips_image_set_int(in, "page-height", page_height);
    if (n_delay > 0) vips_image_set_array_int(in, "delay", delay, n_delay);
    vips_image_set_int(in, "loop", loop);
}

int cvips_thumbnail_jpeg_force(VipsSource *source, VipsImage **out, int width, int height, int shrink, int fail_on,
                               int export_srgb, int no_rotate) {
    // The JPEG decoded at 1/shrink in libjpeg's DCT, then the same resize, rotation and
    // colour handling as vips_thumbnail_source, which would pick its own shrink.
    VipsImage *loaded;
    if (vips_jpegload_source(source, &loaded, "shrink", shrink, "fail_on", fail_on, "access",
                             VIPS_ACCESS_SEQUENTIAL, NULL))
        return -1;
    return thumbnail_loaded(loaded, out, width, height, export_srgb, no_rotate);
}

int cvips_icc_profile(VipsImage *in, const void **data, size_t *length) {
    if (vips_image_get_typeof(in, VIPS_META_ICC_NAME) == 0)
        return -1;
    return vips_image_get_blob(in, VIPS_META_ICC_NAME, data, length);
}

int cvips_set_icc_profile(VipsImage *in, VipsImage **out, const void *data, size_t length) {
    if (vips_copy(in, out, NULL))
        return -1;
    vips_image_set_blob_copy(*out, VIPS_META_ICC_NAME, data, length);
    return 0;
}

int cvips_icc_transform(VipsImage *in, VipsImage **out, const char *output_profile, const char *input_profile) {
    return vips_icc_transform(in, out, output_profile, "embedded", TRUE, "input_profile", input_profile, "intent",
                              VIPS_INTENT_RELATIVE, NULL);
}

int cvips_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height) {
    return vips_extract_area(in, out, left, top, width, height, NULL);
}

int cvips_smartcrop(VipsImage *in, VipsImage **out, int width, int height, int interesting) {
    return vips_smartcrop(in, out, width, height, "interesting", interesting, NULL);
}

int cvips_embed(VipsImage *in, VipsImage **out, int x, int y, int width, int height, const double *background,
                int n) {
    VipsArrayDouble *bg = vips_array_double_new(background, n);
    int r = vips_embed(in, out, x, y, width, height, "extend", VIPS_EXTEND_BACKGROUND, "background", bg, NULL);
    vips_area_unref(VIPS_AREA(bg));
    return r;
}

int cvips_flatten(VipsImage *in, VipsImage **out, const double *background, int n) {
    VipsArrayDouble *bg = vips_array_double_new(background, n);
    int r = vips_flatten(in, out, "background", bg, NULL);
    vips_area_unref(VIPS_AREA(bg));
    return r;
}

int cvips_colourspace(VipsImage *in, VipsImage **out, VipsInterpretation space) {
    return vips_colourspace(in, out, space, NULL);
}

int cvips_cast_uchar(VipsImage *in, VipsImage **out) { return vips_cast_uchar(in, out, NULL); }

int cvips_bandjoin2(VipsImage *a, VipsImage *b, VipsImage **out) { return vips_bandjoin2(a, b, out, NULL); }

int cvips_bandjoin_const1(VipsImage *in, VipsImage **out, double c) {
    return vips_bandjoin_const1(in, out, c, NULL);
}

int cvips_extract_band(VipsImage *in, VipsImage **out, int band, int n) {
    return vips_extract_band(in, out, band, "n", n, NULL);
}

int cvips_multiply(VipsImage *a, VipsImage *b, VipsImage **out) { return vips_multiply(a, b, out, NULL); }

int cvips_linear1(VipsImage *in, VipsImage **out, double a, double b, int uchar_out) {
    return vips_linear1(in, out, a, b, "uchar", uchar_out ? TRUE : FALSE, NULL);
}

int cvips_rot(VipsImage *in, VipsImage **out, VipsAngle angle) { return vips_rot(in, out, angle, NULL); }

int cvips_flip(VipsImage *in, VipsImage **out, VipsDirection direction) { return vips_flip(in, out, direction, NULL); }

int cvips_gaussblur(VipsImage *in, VipsImage **out, double sigma) { return vips_gaussblur(in, out, sigma, NULL); }

int cvips_sharpen(VipsImage *in, VipsImage **out, double sigma) {
    return vips_sharpen(in, out, "sigma", sigma, NULL);
}

int cvips_copy_memory(VipsImage *in, VipsImage **out) {
    *out = vips_image_copy_memory(in);
    return *out ? 0 : -1;
}

int cvips_copy(VipsImage *in, VipsImage **out) { return vips_copy(in, out, NULL); }

int cvips_jpegsave(VipsImage *in, void **buffer, size_t *length, int quality, int strip, int interlace,
                   int optimize_coding) {
    return vips_jpegsave_buffer(in, buffer, length, "Q", quality, "strip", strip ? TRUE : FALSE, "interlace",
                                interlace ? TRUE : FALSE, "optimize_coding", optimize_coding ? TRUE : FALSE, NULL);
}

int cvips_pngsave(VipsImage *in, void **buffer, size_t *length, int compression, int strip) {
    return vips_pngsave_buffer(in, buffer, length, "compression", compression, "strip", strip ? TRUE : FALSE, NULL);
}

int cvips_webpsave(VipsImage *in, void **buffer, size_t *length, int quality, int strip) {
    return vips_webpsave_buffer(in, buffer, length, "Q", quality, "strip", strip ? TRUE : FALSE, NULL);
}

int cvips_webpsave_lossless(VipsImage *in, void **buffer, size_t *length, int strip) {
    return vips_webpsave_buffer(in, buffer, length, "lossless", TRUE, "strip", strip ? TRUE : FALSE, NULL);
}

int cvips_gifsave(VipsImage *in, void **buffer, size_t *length) {
    return vips_gifsave_buffer(in, buffer, length, NULL);
}

int cvips_tiffsave_deflate(VipsImage *in, void **buffer, size_t *length, int strip) {
    // Lossless, deflate-compressed, one strip per 64 rows: read by every TIFF reader.
    return vips_tiffsave_buffer(in, buffer, length, "compression", VIPS_FOREIGN_TIFF_COMPRESSION_DEFLATE, "strip",
                                strip ? TRUE : FALSE, NULL);
}

int cvips_avifsave(VipsImage *in, void **buffer, size_t *length, int quality, int strip, int effort) {
    return vips_heifsave_buffer(in, buffer, length, "Q", quality, "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1,
                                "strip", strip ? TRUE : FALSE, "effort", effort, NULL);
}

int cvips_jxlsave(VipsImage *in, void **buffer, size_t *length, int quality, int strip) {
    return vips_jxlsave_buffer(in, buffer, length, "Q", quality, "strip", strip ? TRUE : FALSE, NULL);
}

int cvips_heifsave_deep(VipsImage *in, void **buffer, size_t *length, int av1, int bitdepth) {
    return vips_heifsave_buffer(in, buffer, length, "lossless", TRUE, "bitdepth", bitdepth, "compression",
                                av1 ? VIPS_FOREIGN_HEIF_COMPRESSION_AV1 : VIPS_FOREIGN_HEIF_COMPRESSION_HEVC, NULL);
}

int cvips_jxlsave_lossless(VipsImage *in, void **buffer, size_t *length) {
    return vips_jxlsave_buffer(in, buffer, length, "lossless", TRUE, NULL);
}

int cvips_tiffsave(VipsImage *in, void **buffer, size_t *length) {
    return vips_tiffsave_buffer(in, buffer, length, NULL);
}

int cvips_load_buffer(const void *data, size_t length, VipsImage **out, int fail_on) {
    *out = vips_image_new_from_buffer(data, length, "", "fail_on", fail_on, NULL);
    return *out ? 0 : -1;
}


int cvips_load_buffer_sequential(const void *data, size_t length, VipsImage **out) {
    *out = vips_image_new_from_buffer(data, length, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    return *out ? 0 : -1;
}

int cvips_load_buffer_pages(const void *data, size_t length, VipsImage **out) {
    // Only GIF, WebP, TIFF, PDF and HEIF loaders have pages; the others refuse n.
    *out = vips_image_new_from_buffer(data, length, "n=-1", NULL);
    if (!*out) {
        vips_error_clear();
        *out = vips_image_new_from_buffer(data, length, "", NULL);
    }
    return *out ? 0 : -1;
}

// ---- HEIF colour description (libheif directly: libvips 8.14 ignores a HEIF's nclx) ----

#include <libheif/heif.h>
#include <webp/decode.h>

unsigned char *cvips_webp_decode(const void *data, size_t length, int *width, int *height, int *bands) {
    WebPBitstreamFeatures features;
    if (WebPGetFeatures(data, length, &features) != VP8_STATUS_OK || features.has_animation) return NULL;
    *bands = features.has_alpha ? 4 : 3;
    return features.has_alpha ? WebPDecodeRGBA(data, length, width, height)
                              : WebPDecodeRGB(data, length, width, height);
}

void cvips_webp_free(void *pixels) { WebPFree(pixels); }

typedef struct {
    int fd;
    int64_t position;
    int64_t size;
} heif_file;

static int64_t heif_file_position(void *user) { return ((heif_file *)user)->position; }

static int heif_file_read(void *data, size_t size, void *user) {
    heif_file *f = user;
    size_t done = 0;
    while (done < size) {
        ssize_t n = pread(f->fd, (char *)data + done, size - done, (off_t)(f->position + (int64_t)done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        done += (size_t)n;
    }
    f->position += (int64_t)size;
    return 0;
}

static int heif_file_seek(int64_t position, void *user) {
    heif_file *f = user;
    if (position < 0 || position > f->size)
        return -1;
    f->position = position;
    return 0;
}

static enum heif_reader_grow_status heif_file_wait(int64_t target, void *user) {
    return target > ((heif_file *)user)->size ? heif_reader_grow_status_size_beyond_eof
                                              : heif_reader_grow_status_size_reached;
}

int cvips_heif_nclx(int fd, int page, int *primaries, int *transfer) {
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -1;
    heif_file file = {fd, 0, st.st_size};
    static const struct heif_reader reader = {1, heif_file_position, heif_file_read, heif_file_seek, heif_file_wait};
    struct heif_context *context = heif_context_alloc();
    if (!context)
        return -1;
    int result = -1;
    struct heif_image_handle *handle = NULL;
    struct heif_error e = heif_context_read_from_reader(context, &reader, &file, NULL);
    if (e.code == heif_error_Ok) {
        if (page <= 0) {
            e = heif_context_get_primary_image_handle(context, &handle);
        } else {
            int count = heif_context_get_number_of_top_level_images(context);
            if (page < count) {
                heif_item_id *ids = g_new(heif_item_id, count);
                heif_context_get_list_of_top_level_image_IDs(context, ids, count);
                e = heif_context_get_image_handle(context, ids[page], &handle);
                g_free(ids);
            }
        }
    }
    if (e.code == heif_error_Ok && handle) {
        struct heif_color_profile_nclx *nclx = NULL;
        e = heif_image_handle_get_nclx_color_profile(handle, &nclx);
        if (e.code == heif_error_Ok && nclx) {
            *primaries = (int)nclx->color_primaries;
            *transfer = (int)nclx->transfer_characteristics;
            result = 0;
        }
        heif_nclx_color_profile_free(nclx);
        heif_image_handle_release(handle);
    }
    heif_context_free(context);
    return result;
}

int cvips_composite_over(VipsImage *base, VipsImage *overlay, VipsImage **out, int x, int y) {
    // The overlay's pixels are sRGB whatever its interpretation says (an image made from
    // memory is "multiband"): say so, or composite would refuse to convert it.
    VipsImage *tagged;
    if (vips_copy(overlay, &tagged, "interpretation", VIPS_INTERPRETATION_sRGB, NULL)) return -1;
    int status = vips_composite2(base, tagged, out, VIPS_BLEND_MODE_OVER, "x", x, "y", y, NULL);
    g_object_unref(tagged);
    return status;
}

int cvips_band_means(VipsImage *in, double *means, int n) {
    VipsImage *stats = NULL;
    if (vips_stats(in, &stats, NULL))
        return -1;
    // Row 0 is every band together; row b + 1 is band b; column 4 is the mean.
    int bands = in->Bands < n ? in->Bands : n;
    for (int b = 0; b < bands; b++)
        means[b] = *VIPS_MATRIX(stats, 4, b + 1);
    g_object_unref(stats);
    return 0;
}

int cvips_grey(VipsImage *in, VipsImage **out) {
    // PIL's convert("L"), which thumbor's grayscale() is: ITU-R 601-2 luma on the encoded
    // values, 0.299 R + 0.587 G + 0.114 B, rounded; alpha kept. (libvips' B_W goes through
    // CIE L*, 15 levels off on a photograph.)
    VipsImage *base = vips_image_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(VIPS_OBJECT(base), 7);
    t[0] = vips_image_new_matrixv(3, 1, 0.299, 0.587, 0.114);
    int alpha = vips_image_hasalpha(in);
    int failed = vips_colourspace(in, &t[1], VIPS_INTERPRETATION_sRGB, NULL) ||
                 vips_cast_uchar(t[1], &t[2], NULL) || vips_extract_band(t[2], &t[3], 0, "n", 3, NULL) ||
                 vips_recomb(t[3], &t[4], t[0], NULL) || vips_round(t[4], &t[5], VIPS_OPERATION_ROUND_RINT, NULL) ||
                 vips_cast_uchar(t[5], &t[6], NULL);
    if (failed) {
        g_object_unref(base);
        return -1;
    }
    VipsImage *grey = NULL;
    if (vips_copy(t[6], &grey, "interpretation", VIPS_INTERPRETATION_B_W, NULL)) {
        g_object_unref(base);
        return -1;
    }
    int r = 0;
    if (alpha) {
        VipsImage *a = NULL;
        r = vips_extract_band(t[2], &a, 3, NULL) || vips_bandjoin2(grey, a, out, NULL);
        if (a)
            g_object_unref(a);
        g_object_unref(grey);
    } else {
        *out = grey;
    }
    g_object_unref(base);
    return r ? -1 : 0;
}
