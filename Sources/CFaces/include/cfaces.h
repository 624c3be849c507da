#ifndef ASPECT_CFACES_H
#define ASPECT_CFACES_H

// Faces in a picture (SPEC: Faces), by dlib's frontal face detector: HOG features and a
// linear SVM, whose model is compiled into the library (no file to download).

#ifdef __cplusplus
extern "C" {
#endif

/// A face found: its box in the pixels of the picture given, and the detector's score.
typedef struct {
    int x, y, width, height;
    double score;
} cfaces_box;

/// Finds the frontal faces in an 8-bit RGB picture of `width` × `height` (`stride` bytes
/// a row), after scaling it up `upsample` times by 2 (each finds faces half as small,
/// at four times the cost), keeping those scored above `min_score` (dlib's own threshold
/// is 0). Writes at most `capacity` boxes, the highest scores first.
/// The number of faces found (may exceed `capacity`), or -1 when the detector failed.
int cfaces_detect(const unsigned char *rgb, int width, int height, int stride, int upsample, double min_score,
                  cfaces_box *out, int capacity);

#ifdef __cplusplus
}
#endif

#endif
