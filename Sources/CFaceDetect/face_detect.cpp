// OpenCV's Viola–Jones cascade (the detector thumbor uses), behind face_detect.h.
#include "face_detect.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

// Built without OpenCV's headers (a build without the Faces trait, on a machine without
// OpenCV), every call says so; nothing links this then.
#if __has_include(<opencv2/objdetect.hpp>)

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <vector>

// OpenCV is loaded when the first detector is made, not linked: linked, its libraries and
// theirs (dnn, protobuf, BLAS, ...) are mapped and relocated at every start, in every run's
// memory whether it crops about faces or not (Benchmarks/RESULTS.md, standard job). So nothing here lets the compiler
// call OpenCV directly: the ten functions used are looked up by their (Itanium C++ ABI) symbol
// names, and OpenCV's objects live in storage of their header's size, made and unmade through
// those functions. A member function is called as a function taking the object first.
namespace {

using Classifier = cv::CascadeClassifier;

struct OpenCV {
    void (*set_num_threads)(int);
    void (*equalize_hist)(const cv::_InputArray &, const cv::_OutputArray &);
    void (*classifier_new)(Classifier *);
    void (*classifier_delete)(Classifier *);
    bool (*classifier_load)(Classifier *, const std::string &);
    bool (*classifier_empty)(const Classifier *);
    void (*classifier_detect)(
        Classifier *, const cv::_InputArray &, std::vector<cv::Rect> &, std::vector<int> &, std::vector<double> &, double,
        int, int, cv::Size, cv::Size, bool);
    void (*mat_new)(cv::Mat *);
    void (*mat_new_over)(cv::Mat *, int, int, int, void *, size_t);
    void (*mat_delete)(cv::Mat *);
};

// The library names of this OpenCV's version (4.6 is libopencv_core.so.406), then the
// unversioned names a -dev package links.
std::string library_name(const char *module, bool versioned) {
    std::string name = std::string("libopencv_") + module + ".so";
    if (!versioned) return name;
    char version[16];
    std::snprintf(version, sizeof version, ".%d%02d", CV_VERSION_MAJOR, CV_VERSION_MINOR);
    return name + version;
}

// OpenCV's functions, or nullptr with the reason in `failure`. Loaded once, kept for the process.
const OpenCV *opencv(std::string &failure) {
    static std::once_flag once;
    static OpenCV table;
    static const OpenCV *loaded = nullptr;
    static std::string reason;
    std::call_once(once, [] {
        void *objdetect = nullptr;
        for (const char *module : {"core", "imgproc", "objdetect"}) {
            void *handle = dlopen(library_name(module, true).c_str(), RTLD_NOW | RTLD_GLOBAL);
            if (handle == nullptr) handle = dlopen(library_name(module, false).c_str(), RTLD_NOW | RTLD_GLOBAL);
            if (handle == nullptr) {
                const char *error = dlerror();
                reason = "cannot load OpenCV (" + library_name(module, true) + "): " + (error ? error : "not found");
                return;
            }
            objdetect = handle;
        }
        bool complete = true;
        auto find = [&](auto &function, const char *symbol) {
            function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(objdetect, symbol));
            if (function == nullptr) {
                complete = false;
                reason = std::string("OpenCV has no ") + symbol;
            }
        };
        find(table.set_num_threads, "_ZN2cv13setNumThreadsEi");
        find(table.equalize_hist, "_ZN2cv12equalizeHistERKNS_11_InputArrayERKNS_12_OutputArrayE");
        find(table.classifier_new, "_ZN2cv17CascadeClassifierC1Ev");
        find(table.classifier_delete, "_ZN2cv17CascadeClassifierD1Ev");
        find(table.classifier_load,
             "_ZN2cv17CascadeClassifier4loadERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE");
        find(table.classifier_empty, "_ZNK2cv17CascadeClassifier5emptyEv");
        // The overload that also gives each face's weight, its last stage's score.
        find(table.classifier_detect,
             "_ZN2cv17CascadeClassifier16detectMultiScaleERKNS_11_InputArrayERSt6vectorINS_5Rect_IiEESaIS6_EERS4_IiSaIiEE"
             "RS4_IdSaIdEEdiiNS_5Size_IiEESH_b");
        find(table.mat_new, "_ZN2cv3MatC1Ev");
        find(table.mat_new_over, "_ZN2cv3MatC1EiiiPvm");
        find(table.mat_delete, "_ZN2cv3MatD1Ev");
        if (!complete) return;
        // The pipeline's stages run detections side by side, one per lane: OpenCV's own
        // threads would only contend with them. Process-wide, so set once.
        table.set_num_threads(0);
        loaded = &table;
    });
    if (loaded == nullptr) failure = reason;
    return loaded;
}

// A cv::Mat made and unmade through OpenCV's own functions.
class Matrix {
  public:
    explicit Matrix(const OpenCV &cv) : cv_(cv) { cv_.mat_new(get()); }
    Matrix(const OpenCV &cv, int rows, int columns, int type, void *data, size_t step) : cv_(cv) {
        cv_.mat_new_over(get(), rows, columns, type, data, step);
    }
    ~Matrix() { cv_.mat_delete(get()); }
    Matrix(const Matrix &) = delete;
    Matrix &operator=(const Matrix &) = delete;
    cv::Mat *get() { return std::launder(reinterpret_cast<cv::Mat *>(storage_)); }

  private:
    const OpenCV &cv_;
    alignas(cv::Mat) unsigned char storage_[sizeof(cv::Mat)];
};

}  // namespace

struct pl_face_detector {
    const OpenCV *cv;
    alignas(Classifier) unsigned char storage[sizeof(Classifier)];
    Classifier *cascade() { return std::launder(reinterpret_cast<Classifier *>(storage)); }
};

static void copy_error(char *error, int error_size, const char *text) {
    if (error == nullptr || error_size <= 0) return;
    // OpenCV's messages end in a line break, which a message of one line does not want.
    std::string line(text);
    while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
    std::snprintf(error, static_cast<size_t>(error_size), "%s", line.c_str());
}

pl_face_detector *pl_face_detector_new(const char *cascade_path, char *error, int error_size) {
    // A file that cannot be read is said here: OpenCV would print a line of its own on standard
    // error, outside pipeline's messages, before failing.
    if (std::FILE *file = std::fopen(cascade_path, "rb")) {
        std::fclose(file);
    } else {
        copy_error(error, error_size, (std::string("cannot read it: ") + std::strerror(errno)).c_str());
        return nullptr;
    }
    std::string failure;
    const OpenCV *cv = opencv(failure);
    if (cv == nullptr) {
        copy_error(error, error_size, failure.c_str());
        return nullptr;
    }
    auto *detector = new (std::nothrow) pl_face_detector();
    if (detector == nullptr) {
        copy_error(error, error_size, "out of memory");
        return nullptr;
    }
    detector->cv = cv;
    try {
        cv->classifier_new(detector->cascade());
    } catch (const std::exception &exception) {
        copy_error(error, error_size, exception.what());
        delete detector;
        return nullptr;
    }
    try {
        if (!cv->classifier_load(detector->cascade(), cascade_path) || cv->classifier_empty(detector->cascade())) {
            copy_error(error, error_size, "the file is missing or is not an OpenCV cascade");
            pl_face_detector_free(detector);
            return nullptr;
        }
        return detector;
    } catch (const std::exception &exception) {
        copy_error(error, error_size, exception.what());
        pl_face_detector_free(detector);
        return nullptr;
    }
}

void pl_face_detector_free(pl_face_detector *detector) {
    if (detector == nullptr) return;
    detector->cv->classifier_delete(detector->cascade());
    delete detector;
}

int pl_face_detector_detect(
    pl_face_detector *detector, const unsigned char *gray, int width, int height, int stride, pl_face_box *boxes, int max,
    char *error, int error_size) {
    const OpenCV &cv = *detector->cv;
    try {
        // The pixels stay the caller's: the matrix only points at them.
        Matrix image(cv, height, width, CV_8UC1, const_cast<unsigned char *>(gray), static_cast<size_t>(stride));
        Matrix equalised(cv);
        cv.equalize_hist(cv::_InputArray(*image.get()), cv::_OutputArray(*equalised.get()));
        std::vector<cv::Rect> faces;
        std::vector<int> levels;
        std::vector<double> weights;
        // Four neighbours, one more than OpenCV's default, for fewer false faces in texture. A
        // face under a tenth of the short side barely moves a crop, and the smallest scales
        // cost the most: skipping them, with a 1.2 step between scales, is half the time of
        // OpenCV's defaults (Benchmarks/RESULTS.md).
        const int smallest = std::max(20, std::min(width, height) / 10);
        cv.classifier_detect(
            detector->cascade(), cv::_InputArray(*equalised.get()), faces, levels, weights, 1.2, 4, 0,
            cv::Size(smallest, smallest), cv::Size(), true);
        // A face the cascade scores far below the best one found beside it is most often a
        // false one (a shoulder, a patch of texture), and a crop about both misses the real
        // one; faces of a group photo score alike.
        double best = 0;
        for (size_t index = 0; index < faces.size() && index < weights.size(); index++) best = std::max(best, weights[index]);
        int count = 0;
        for (size_t index = 0; index < faces.size() && index < weights.size(); index++) {
            if (weights[index] < best / 3) continue;
            if (count < max) boxes[count] = pl_face_box{faces[index].x, faces[index].y, faces[index].width, faces[index].height};
            count++;
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
