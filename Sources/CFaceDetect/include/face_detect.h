// Face detection with OpenCV's cascade classifier, behind a C interface Swift can call.
#ifndef PIPELINE_FACE_DETECT_H
#define PIPELINE_FACE_DETECT_H

#ifdef __cplusplus
extern "C" {
#endif

/// A face found, in the pixels of the image searched.
typedef struct pl_face_box {
    int left;
    int top;
    int width;
    int height;
} pl_face_box;

/// A loaded cascade. One detector is used by one thread at a time.
typedef struct pl_face_detector pl_face_detector;

/// Loads the cascade file at `cascade_path`; NULL when it cannot be read or is no cascade,
/// with the reason in `error` (`error_size` bytes, always terminated).
pl_face_detector *pl_face_detector_new(const char *cascade_path, char *error, int error_size);

/// Frees a detector from `pl_face_detector_new`.
void pl_face_detector_free(pl_face_detector *detector);

/// Finds faces in an 8-bit greyscale image of `width`×`height` pixels, rows `stride` bytes
/// apart; writes at most `max` boxes to `boxes` and returns how many faces were found (which
/// may be more than `max`), or -1 with the reason in `error`.
int pl_face_detector_detect(
    pl_face_detector *detector, const unsigned char *gray, int width, int height, int stride, pl_face_box *boxes, int max,
    char *error, int error_size);

#ifdef __cplusplus
}
#endif

#endif
