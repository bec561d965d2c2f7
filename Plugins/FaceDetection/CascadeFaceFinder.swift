import CFaceDetect
import Foundation
public import PipelineKit
public import Vips

/// Faces found by OpenCV's cascade classifier (Viola–Jones, as thumbor uses), for
/// `"position": "faces"`.
///
/// The image is searched as an 8-bit greyscale copy about `searchSize` pixels on its long
/// side (a smaller image enlarged to it), and the boxes are mapped back to the image's pixels.
/// The cascade is loaded from `cascade` once per detector in use: detectors are kept in a pool,
/// one per lane detecting at once, since a classifier is not safe to share between threads.
public final class CascadeFaceFinder: FaceFinding {
    /// The frontal-face cascade Debian's `opencv-data` installs.
    public static let defaultCascade = "/usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml"

    /// The cascade file.
    public let cascade: String
    /// The long side, in pixels, of the copy searched.
    public let searchSize: Int
    /// Loaded detectors not in use now.
    private let idle = Locked<[Detector]>([])

    /// A finder using the cascade file `cascade`, searching a copy `searchSize` pixels on its long side.
    public init(cascade: String = CascadeFaceFinder.defaultCascade, searchSize: Int = 640) {
        self.cascade = cascade
        self.searchSize = max(32, searchSize)
    }

    /// The faces in `image`, in its pixels.
    public func faces(in image: VipsImage) throws -> [PixelBox] {
        // A small image (an avatar, a thumbnail) is enlarged to the size too: the cascade misses
        // faces a few tens of pixels wide that it finds in the same pixels enlarged.
        let scale = Double(searchSize) / Double(max(image.width, image.height))
        let grey = try Self.greyscale(image, scale: scale)
        let pixels = try grey.bytes()
        let detector = try takeDetector()
        defer { idle.withLock { $0.append(detector) } }
        let found = try detector.detect(pixels, width: grey.width, height: grey.height)
        // Back to the image's pixels: the copy's size was rounded, so each side has its own scale.
        let (horizontal, vertical) = (Double(image.width) / Double(grey.width), Double(image.height) / Double(grey.height))
        return found.map { box in
            let left = Int((Double(box.left) * horizontal).rounded(.down))
            let top = Int((Double(box.top) * vertical).rounded(.down))
            return PixelBox(
                left: left, top: top,
                width: min(image.width - left, Int((Double(box.width) * horizontal).rounded(.up))),
                height: min(image.height - top, Int((Double(box.height) * vertical).rounded(.up))))
        }
    }

    /// The image's luminance in 8 bits, scaled by `scale`, without alpha.
    static func greyscale(_ image: VipsImage, scale: Double) throws(VipsError) -> VipsImage {
        var small = image
        if scale != 1 { small = try small.resized(horizontalScale: scale, verticalScale: scale, kernel: .linear) }
        small = try small.inEightBits()
        if small.interpretation != .blackAndWhite { small = try small.converted(to: .blackAndWhite).roundedToEightBits() }
        if small.bands > 1 { small = try small.extractingBands(0) }
        return try small.rendered()
    }

    /// Why the cascade cannot be loaded (`opencv-data` not installed, a damaged file), found by
    /// loading it: the detector loaded is kept for the run's first search.
    public var unavailableReason: String? {
        do throws(FaceDetectionError) {
            let detector = try takeDetector()
            idle.withLock { $0.append(detector) }
            return nil
        } catch {
            return error.description
        }
    }

    private func takeDetector() throws(FaceDetectionError) -> Detector {
        if let detector = idle.withLock({ $0.popLast() }) { return detector }
        return try Detector(cascade: cascade)
    }
}

/// The cascade could not be loaded, or OpenCV failed on an image.
public struct FaceDetectionError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, naming the cascade file when it is at fault.
    public let description: String
}

/// One loaded cascade, used by one thread at a time.
private final class Detector: @unchecked Sendable {
    private let handle: OpaquePointer

    init(cascade: String) throws(FaceDetectionError) {
        var error = [CChar](repeating: 0, count: 256)
        guard let handle = pl_face_detector_new(cascade, &error, Int32(error.count)) else {
            throw FaceDetectionError(description: "cannot load the face cascade \(cascade): \(Self.text(error))")
        }
        self.handle = handle
    }

    deinit {
        pl_face_detector_free(handle)
    }

    /// The text of a C string buffer, up to its terminating zero.
    private static func text(_ buffer: [CChar]) -> String {
        // OpenCV's own messages end in a newline.
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func detect(_ pixels: [UInt8], width: Int, height: Int) throws(FaceDetectionError) -> [PixelBox] {
        var boxes = [pl_face_box](repeating: pl_face_box(), count: 64)
        var error = [CChar](repeating: 0, count: 256)
        let count = pixels.withUnsafeBufferPointer { pixels in
            pl_face_detector_detect(
                handle, pixels.baseAddress, Int32(width), Int32(height), Int32(width), &boxes, Int32(boxes.count), &error,
                Int32(error.count))
        }
        guard count >= 0 else { throw FaceDetectionError(description: "face detection failed: \(Self.text(error))") }
        return boxes.prefix(Int(count)).map { PixelBox(left: Int($0.left), top: Int($0.top), width: Int($0.width), height: Int($0.height)) }
    }
}
