// Fixed-arity wrappers over the libvips calls Aspect uses. libvips' operations take
// NULL-terminated varargs of option names and values, which Swift cannot call; each
// function here calls one operation with the options Aspect needs, nothing more.
// Every function returns 0 on success and -1 on failure (the text is in libvips'
// process-wide error buffer); every VipsImage** out is a new reference the caller owns.
#ifndef CVIPS_H
#define CVIPS_H

#include <vips/vips.h>

/// Starts libvips once: operation cache off, libvips' own concurrency 1.
int cvips_start(const char *argv0);

/// Receives what libvips and GLib log: level 3 error, 2 warning, 1 info, 0 debug; domain
/// may be NULL. Called on whichever thread logged.
typedef void (*cvips_log_sink)(int level, const char *domain, const char *message);

/// Sends GLib's log of the domains VIPS, GLib, GLib-GObject, GLib-GIO, GModule and the
/// default one (libvips' warnings among it) to `sink` instead of stderr; debug and info
/// messages only when include_debug.
void cvips_route_log(cvips_log_sink sink, int include_debug);

/// Nanoseconds on CLOCK_MONOTONIC: the clock deadlines are set and checked on.
unsigned long long cvips_now_ns(void);

/// A source reading an open file (the caller keeps the descriptor open for the source's
/// life) by pread(2), with a deadline: past deadline_ns on CLOCK_MONOTONIC (0: none), a
/// read fails, so a loader decoding from it stops. Unref with g_object_unref.
VipsSource *cvips_source_new(int fd, unsigned long long deadline_ns);

/// Whether a read of this source failed for its deadline.
int cvips_source_expired(VipsSource *source);

/// The name of the loader for a source (sniffed from its first bytes), or NULL.
/// Blocks every libvips loader (the VipsForeignLoad hierarchy), then unblocks the classes
/// named: a loader left blocked is never picked, whatever the bytes look like.
void cvips_restrict_loaders(const char *const *allowed, int count);

const char *cvips_find_loader(VipsSource *source);

/// Opens a source lazily: reads the header of `page` (from 0) only, decodes nothing.
int cvips_open_header(VipsSource *source, int page, int thumbnail, VipsImage **out);

/// The thumbnail of a file, resized to exactly width × height (size=force, so both axes
/// are set), with shrink-on-load, EXIF autorotation, and CMYK to sRGB. export_srgb: an
/// embedded RGB profile is converted to sRGB too. fail_on: a VipsFailOn. page: from 0, for
/// a PDF or a multi-page TIFF or HEIF (0 for any other). A PDF or SVG is drawn at the scale
/// the size needs, larger than its own size too.
/// no_rotate: the pixels as stored, EXIF orientation not applied (imgproxy's auto_rotate:0).
int cvips_thumbnail_force(VipsSource *source, VipsImage **out, int width, int height, int page, int fail_on,
                          int export_srgb, int no_rotate, int thumbnail);

/// A source with no shrink-on-load (a PNG), 8-bit sRGB with alpha, flattened onto
/// `background` (n values, 0 … 255) as it is decoded, then thumbnailed to exactly width ×
/// height as cvips_thumbnail_force does: the same picture a flatten after the resize
/// gives (both are linear), without the premultiplied float resize an alpha channel
/// costs. Any other image (16-bit, grey, no alpha) is thumbnailed unflattened.
int cvips_thumbnail_flattened(VipsSource *source, VipsImage **out, int width, int height, int page, int fail_on,
                              int export_srgb, int no_rotate, const double *background, int n);

/// A JPEG source decoded with libjpeg's shrink-on-load by `shrink` (1, 2, 4 or 8), then
/// thumbnailed to exactly width × height as cvips_thumbnail_force does.
int cvips_thumbnail_jpeg_force(VipsSource *source, VipsImage **out, int width, int height, int shrink, int fail_on,
                               int export_srgb, int no_rotate);

/// Every frame of an animated source (loaded with n=-1), each resized to exactly
/// width × height as cvips_thumbnail_force does: a strip of frames, page-height = height.
int cvips_thumbnail_animated(VipsSource *source, VipsImage **out, int width, int height, int fail_on,
                             int export_srgb);
/// An image in memory (a video's frame) resized to exactly width × height as
/// cvips_thumbnail_force does, with no shrink-on-load to use.
int cvips_thumbnail_image_force(VipsImage *in, VipsImage **out, int width, int height);
/// The box of `in` whose pixels differ from the background by more than `threshold`
/// (of 255) in some band: libvips' find_trim, the background being `color` (three
/// doubles, sRGB) or, when NULL, the top-left pixel. An image with alpha is flattened
/// onto magenta first, as imgproxy does.
int cvips_find_trim(VipsImage *in, double threshold, const double *color, int bottom_right, int *left, int *top,
                    int *width, int *height);
/// Images stacked top to bottom.
int cvips_arrayjoin_vertical(VipsImage **in, int n, VipsImage **out);
/// `n` images of one size, `across` to a row, left to right then top to bottom.
int cvips_arrayjoin_grid(VipsImage **in, int n, int across, VipsImage **out);
/// An animation's page height (0 if none), its frame delays in ms (owned by the image,
/// n_delay of them, may be 0) and its loop count (0: forever).
void cvips_get_animation(VipsImage *in, int *page_height, const int **delay, int *n_delay, int *loop);
/// Sets page-height, delay (when n_delay > 0) and loop on in, which must not be shared.
void cvips_set_animation(VipsImage *in, int page_height, const int *delay, int n_delay, int loop);
/// The embedded ICC profile, owned by the image; -1 when there is none.
int cvips_icc_profile(VipsImage *in, const void **data, size_t *length);
/// A copy of in that carries `data` as its ICC profile (the pixels unchanged).
int cvips_set_icc_profile(VipsImage *in, VipsImage **out, const void *data, size_t length);
/// LittleCMS through libvips: from the embedded profile (else input_profile) to
/// output_profile ("srgb" or a file), relative colorimetric.
int cvips_icc_transform(VipsImage *in, VipsImage **out, const char *output_profile, const char *input_profile);

int cvips_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height);
/// interesting: a VipsInteresting (attention, entropy).
int cvips_smartcrop(VipsImage *in, VipsImage **out, int width, int height, int interesting);
/// Places in at (x, y) on a width × height canvas of the background colour (n values).
int cvips_embed(VipsImage *in, VipsImage **out, int x, int y, int width, int height, const double *background,
                int n);
int cvips_flatten(VipsImage *in, VipsImage **out, const double *background, int n);
/// in on a width × height canvas at (0, 0), the rest filled by copying in's edge pixels.
int cvips_embed_copy(VipsImage *in, VipsImage **out, int width, int height);
/// Each factor × factor block averaged into one pixel.
int cvips_shrink(VipsImage *in, VipsImage **out, double factor);
/// Each pixel repeated factor × factor times.
int cvips_zoom(VipsImage *in, VipsImage **out, int factor);
int cvips_colourspace(VipsImage *in, VipsImage **out, VipsInterpretation space);
int cvips_cast_uchar(VipsImage *in, VipsImage **out);
/// `overlay` (sRGB with alpha) over `base` with its top-left corner at x, y.
int cvips_composite_over(VipsImage *base, VipsImage *overlay, VipsImage **out, int x, int y);
int cvips_bandjoin2(VipsImage *a, VipsImage *b, VipsImage **out);
/// Appends one constant band (an opaque alpha, say).
int cvips_bandjoin_const1(VipsImage *in, VipsImage **out, double c);
/// n bands of in, starting at band.
int cvips_extract_band(VipsImage *in, VipsImage **out, int band, int n);
int cvips_multiply(VipsImage *a, VipsImage *b, VipsImage **out);
/// out = in * a + b, as uchar when uchar_out is non-zero.
int cvips_linear1(VipsImage *in, VipsImage **out, double a, double b, int uchar_out);
/// Rotates by a multiple of 90 degrees (a VipsAngle).
int cvips_rot(VipsImage *in, VipsImage **out, VipsAngle angle);
/// Mirrors: direction is a VipsDirection.
int cvips_flip(VipsImage *in, VipsImage **out, VipsDirection direction);
/// A Gaussian blur of standard deviation sigma.
/// The mean of each band (at most n) into means.
int cvips_band_means(VipsImage *in, double *means, int n);
/// Shades of grey (one band, alpha kept).
int cvips_grey(VipsImage *in, VipsImage **out);
int cvips_gaussblur(VipsImage *in, VipsImage **out, double sigma);
/// Sharpening (unsharp mask on L*) of standard deviation sigma.
int cvips_sharpen(VipsImage *in, VipsImage **out, double sigma);
int cvips_copy_memory(VipsImage *in, VipsImage **out);
/// A new image header over the same pixels, so its metadata can change alone.
int cvips_copy(VipsImage *in, VipsImage **out);

/// Encoders. *buffer is g_malloc'd: free it with g_free. strip removes all metadata.
int cvips_jpegsave(VipsImage *in, void **buffer, size_t *length, int quality, int strip, int interlace,
                   int optimize_coding);
int cvips_pngsave(VipsImage *in, void **buffer, size_t *length, int compression, int strip);
int cvips_webpsave(VipsImage *in, void **buffer, size_t *length, int quality, int strip);
int cvips_webpsave_lossless(VipsImage *in, void **buffer, size_t *length, int strip);
int cvips_gifsave(VipsImage *in, void **buffer, size_t *length);
/// `effort`: 0 fastest … 9 (aom's speed is 9 − effort).
int cvips_avifsave(VipsImage *in, void **buffer, size_t *length, int quality, int strip, int effort);
int cvips_jxlsave(VipsImage *in, void **buffer, size_t *length, int quality, int strip);
int cvips_tiffsave(VipsImage *in, void **buffer, size_t *length);
/// TIFF as a result: lossless (deflate); `strip` drops the metadata.
int cvips_tiffsave_deflate(VipsImage *in, void **buffer, size_t *length, int strip);
/// Lossless HEIF (HEVC) or AVIF (av1 non-zero) of `bitdepth` bits (8, 10 or 12), and
/// lossless JPEG XL at the image's own depth: the deep-colour fixtures.
int cvips_heifsave_deep(VipsImage *in, void **buffer, size_t *length, int av1, int bitdepth);
int cvips_jxlsave_lossless(VipsImage *in, void **buffer, size_t *length);

/// The colour description (ISO/IEC 23091-2 code points) a HEIF or AVIF file gives its
/// image as nclx: primaries (1 BT.709, 9 BT.2020, 12 Display P3) and transfer (16 PQ,
/// 18 HLG). page 0: the primary image; else that top-level image. -1 when there is none.
/// Read with libheif itself: libvips 8.14 ignores nclx ("ignoring nclx profile").
int cvips_heif_nclx(int fd, int page, int *primaries, int *transfer);

/// A still WebP in memory decoded by libwebp itself to 8-bit RGB, or RGBA when it has
/// alpha (`bands` says which): the pixels libvips' loader gives (the same decoder, with
/// its fancy upsampling), in a third of the time, for measuring q=auto's candidates. NULL
/// for an animation or a broken file; free the pixels with cvips_webp_free.
unsigned char *cvips_webp_decode(const void *data, size_t length, int *width, int *height, int *bands);
void cvips_webp_free(void *pixels);

/// Every page (frame) of an image in memory, stacked, lazily.
int cvips_load_buffer_pages(const void *data, size_t length, VipsImage **out);
/// Decodes an image in memory (any loader libvips has), lazily.
int cvips_load_buffer(const void *data, size_t length, VipsImage **out, int fail_on);
/// The same, read once from top to bottom (access=sequential): for an image that is only
/// turned into pixels in memory, as q=auto's candidates are, which skips the loader's
/// random-access caching.
int cvips_load_buffer_sequential(const void *data, size_t length, VipsImage **out);

#endif
