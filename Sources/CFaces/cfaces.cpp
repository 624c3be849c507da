// dlib's frontal face detector behind a C call Swift can make.

#include "cfaces.h"

#include <algorithm>
#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/image_transforms.h>
#include <vector>

extern "C" int cfaces_detect(const unsigned char *rgb, int width, int height, int stride, int upsample,
                             double min_score, cfaces_box *out, int capacity) {
    if (rgb == nullptr || width <= 0 || height <= 0 || stride < width * 3 || upsample < 0 || upsample > 2) {
        return -1;
    }
    try {
        // Made once a thread: the model is read from the library on construction, and a
        // detector is not shared between threads.
        thread_local dlib::frontal_face_detector detector = dlib::get_frontal_face_detector();
        dlib::array2d<dlib::rgb_pixel> image(height, width);
        for (int y = 0; y < height; y++) {
            const unsigned char *row = rgb + (size_t)y * (size_t)stride;
            for (int x = 0; x < width; x++) {
                image[y][x] = dlib::rgb_pixel(row[3 * x], row[3 * x + 1], row[3 * x + 2]);
            }
        }
        for (int i = 0; i < upsample; i++) {
            dlib::pyramid_up(image);
        }
        std::vector<dlib::rect_detection> found;
        detector(image, found, min_score);
        std::sort(found.begin(), found.end(),
                  [](const dlib::rect_detection &a, const dlib::rect_detection &b) {
                      return a.detection_confidence > b.detection_confidence;
                  });
        const double scale = (double)(1 << upsample);
        const int n = (int)std::min<size_t>(found.size(), (size_t)std::max(capacity, 0));
        for (int i = 0; i < n; i++) {
            const dlib::rectangle &r = found[i].rect;
            out[i].x = (int)(r.left() / scale);
            out[i].y = (int)(r.top() / scale);
            out[i].width = (int)(r.width() / scale);
            out[i].height = (int)(r.height() / scale);
            out[i].score = found[i].detection_confidence;
        }
        return (int)found.size();
    } catch (...) {
        return -1;
    }
}
