#include "CVips.h"

int cvips_start(const char *argv0) {
    if (VIPS_INIT(argv0))
        return -1;
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    vips_concurrency_set(1);
    return 0;
}

int cvips_open_header(const char *path, VipsImage **out) {
    *out = vips_image_new_from_file(path, "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    return *out ? 0 : -1;
}

int cvips_thumbnail_force(const char *path, VipsImage **out, int width, int height, int fail_on) {
    return vips_thumbnail(path, out, width, "height", height, "size", VIPS_SIZE_FORCE, "fail_on", fail_on, NULL);
}

int cvips_thumbnail_buffer_force(const void *data, size_t length, VipsImage **out, int width, int height,
                                 int fail_on) {
    return vips_thumbnail_buffer((void *)data, length, out, width, "height", height, "size", VIPS_SIZE_FORCE,
                                 "fail_on", fail_on, NULL);
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

int cvips_gifsave(VipsImage *in, void **buffer, size_t *length) {
    return vips_gifsave_buffer(in, buffer, length, NULL);
}

int cvips_avifsave(VipsImage *in, void **buffer, size_t *length, int quality, int strip) {
    return vips_heifsave_buffer(in, buffer, length, "Q", quality, "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1,
                                "strip", strip ? TRUE : FALSE, NULL);
}

int cvips_load_buffer(const void *data, size_t length, VipsImage **out, int fail_on) {
    *out = vips_image_new_from_buffer(data, length, "", "fail_on", fail_on, NULL);
    return *out ? 0 : -1;
}

