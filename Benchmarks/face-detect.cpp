/* Benchmarks/face-detect.sh's timer: the pipeline's detection (Sources/CFaceDetect/face_detect.cpp,
 * compiled in) on 8-bit greyscale images, and OpenCV's defaults (scale step 1.1, 3 neighbours,
 * 20 px faces) on the same for comparison. Prints per image: CPU milliseconds a detection (the
 * mean of 5) and faces found, each way. */
#include "face_detect.h"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

#include <cstdio>
#include <ctime>
#include <vector>

static double cpu_ms(std::clock_t since) { return double(std::clock() - since) * 1000.0 / CLOCKS_PER_SEC; }

int main(int argc, char **argv) {
    const char *cascade = "/usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml";
    char error[256];
    pl_face_detector *detector = pl_face_detector_new(cascade, error, sizeof error);
    if (detector == nullptr) { std::fprintf(stderr, "%s\n", error); return 1; }
    cv::CascadeClassifier defaults(cascade);
    std::printf("image,size,pipeline_ms,pipeline_faces,opencv_defaults_ms,opencv_defaults_faces\n");
    for (int index = 1; index < argc; index++) {
        cv::Mat grey = cv::imread(argv[index], cv::IMREAD_GRAYSCALE);
        if (grey.empty()) { std::fprintf(stderr, "cannot read %s\n", argv[index]); return 1; }
        pl_face_box boxes[64];
        int found = 0;
        std::clock_t start = std::clock();
        for (int run = 0; run < 5; run++) {
            found = pl_face_detector_detect(detector, grey.data, grey.cols, grey.rows, int(grey.step), boxes, 64, error, sizeof error);
        }
        double ours = cpu_ms(start) / 5;
        std::vector<cv::Rect> faces;
        start = std::clock();
        for (int run = 0; run < 5; run++) {
            cv::Mat equalised;
            cv::equalizeHist(grey, equalised);
            faces.clear();
            defaults.detectMultiScale(equalised, faces, 1.1, 3, 0, cv::Size(20, 20));
        }
        std::printf("%s,%dx%d,%.1f,%d,%.1f,%zu\n", argv[index], grey.cols, grey.rows, ours, found, cpu_ms(start) / 5, faces.size());
    }
    pl_face_detector_free(detector);
    return 0;
}
