// OpenCV's Viola–Jones cascade (the detector thumbor uses), behind face_detect.h.
#include "face_detect.h"

#include <cstdio>

// Built without OpenCV's headers (a build without the Faces trait, on a machine without
// OpenCV), every call says so; nothing links this then.
#if __has_include(<opencv2/objdetect.hpp>)

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

#include <algorithm>
#include <exception>
#include <mutex>
#include <vector>

struct pl_face_detector {
    cv::CascadeClassifier cascade;
};

static void copy_error(char *error, int error_size, const char *text) {
    if (error == nullptr || error_size <= 0) return;
    std::snprintf(error, static_cast<size_t>(error_size), "%s", text);
}

pl_face_detector *pl_face_detector_new(const char *cascade_path, char *error, int error_size) {
    try {
        // The pipeline's stages run detections side by side, one per lane: OpenCV's own
        // threads would only contend with them. Process-wide, so set once.
        static std::once_flag single_threaded;
        std::call_once(single_threaded, [] { cv::setNumThreads(0); });
        auto *detector = new pl_face_detector();
        if (!detector->cascade.load(cascade_path) || detector->cascade.empty()) {
            delete detector;
            copy_error(error, error_size, "the file is missing or is not an OpenCV cascade");
            return nullptr;
        }
        return detector;
    } catch (const std::exception &exception) {
        copy_error(error, error_size, exception.what());
        return nullptr;
    }
}

void pl_face_detector_free(pl_face_detector *detector) { delete detector; }

int pl_face_detector_detect(
    pl_face_detector *detector, const unsigned char *gray, int width, int height, int stride, pl_face_box *boxes, int max,
    char *error, int error_size) {
    try {
        // The pixels stay the caller's: the matrix only points at them.
        cv::Mat image(height, width, CV_8UC1, const_cast<unsigned char *>(gray), static_cast<size_t>(stride));
        cv::Mat equalised;
        cv::equalizeHist(image, equalised);
        std::vector<cv::Rect> faces;
        // Four neighbours, one more than OpenCV's default, for fewer false faces in texture. A
        // face under a tenth of the short side barely moves a crop, and the smallest scales
        // cost the most: skipping them, with a 1.2 step between scales, is half the time of
        // OpenCV's defaults (Benchmarks/RESULTS.md).
        const int smallest = std::max(20, std::min(width, height) / 10);
        detector->cascade.detectMultiScale(equalised, faces, 1.2, 4, 0, cv::Size(smallest, smallest));
        int count = static_cast<int>(faces.size());
        for (int index = 0; index < count && index < max; index++) {
            boxes[index] = pl_face_box{faces[index].x, faces[index].y, faces[index].width, faces[index].height};
        }
        return count;
    } catch (const std::exception &exception) {
        copy_error(error, error_size, exception.what());
        return -1;
    }
}

#else

static void copy_error(char *error, int error_size, const char *text) {
    if (error == nullptr || error_size <= 0) return;
    std::snprintf(error, static_cast<size_t>(error_size), "%s", text);
}

pl_face_detector *pl_face_detector_new(const char *, char *error, int error_size) {
    copy_error(error, error_size, "this build has no OpenCV");
    return nullptr;
}

void pl_face_detector_free(pl_face_detector *) {}

int pl_face_detector_detect(
    pl_face_detector *, const unsigned char *, int, int, int, pl_face_box *, int, char *error, int error_size) {
    copy_error(error, error_size, "this build has no OpenCV");
    return -1;
}

#endif
