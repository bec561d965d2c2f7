import CVips
import Foundation
import Synchronization

/// An image in libvips: a header plus a recipe for its pixels, computed on demand.
///
/// A libvips image never changes once built (every operation makes a new image that holds a
/// reference to its input), and libvips guards its own shared state, so one image may be read
/// from several threads at once: that is why this class is `Sendable`.
public final class VipsImage: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<CVips.VipsImage>

    init(taking pointer: UnsafeMutablePointer<CVips.VipsImage>) {
        self.pointer = pointer
        Self.live.add(1, ordering: .relaxed)
    }

    deinit {
        Self.serializingVectorCode { g_object_unref(pointer) }
        Self.live.subtract(1, ordering: .relaxed)
    }

    private static let live = Atomic<Int>(0)

    /// Runs `body`, which builds an operation that compiles vector code or gives up a reference
    /// to a libvips image or operation (which may free some), one at a time across the process.
    ///
    /// Orc, which libvips compiles its vector code with, hands out and frees code memory without
    /// a lock in the version Debian 12 ships (0.4.33: it finds a free chunk under its mutex, then
    /// splits it and marks it used after letting go, and frees with no lock at all). Two threads
    /// doing either at once corrupt Orc's list of code chunks and crash the process: seen in
    /// `pipeline watch` and in `pipeline run` under AddressSanitizer, and in a C program of eight
    /// threads resizing small images, which crashed with the drops alone serialized and never
    /// with the builds serialized too.
    ///
    /// Only builds that compile vector code go through here (`building(_:_:)`), as few of them
    /// compute pixels; one that does (`smartcrop`) holds every drop in the process back while
    /// it reads them. Nothing that runs under this lock may take it again: libvips' threads
    /// call back into Swift only to read rows, never to drop an image. Not Orc's own mutex:
    /// libvips compiles under its own lock and then takes Orc's, and a drop takes libvips' lock,
    /// so holding Orc's deadlocks. Not `Locked`: what the lock guards is C's, so its value would
    /// be empty, and ThreadSanitizer reports every access to an empty value behind it as a race
    /// with the lock itself (seen in CI).
    static func serializingVectorCode<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        try vectorCode.withLock { _ throws(Failure) in try body() }
    }

    private static let vectorCode = Mutex(())

    /// Runs `build`, the build of the libvips operation `nickname`, under the lock when it
    /// compiles Orc vector code, itself or in an operation it builds: the vertical reduce of every
    /// resize, integer convolutions (blurs, sharpening, edges) and morphology, in libvips 8.14.
    /// `abs` compiles its code once, when libvips starts (`Vips.start()`).
    static func building<Result>(_ nickname: String, _ build: () -> Result) -> Result {
        operationsCompilingVectorCode.contains(nickname) ? serializingVectorCode(build) : build()
    }

    private static let operationsCompilingVectorCode: Set<String> = [
        "resize", "reduce", "reducev", "shrink", "thumbnail", "thumbnail_buffer", "thumbnail_image", "thumbnail_source",
        "smartcrop", "conv", "convi", "convsep", "compass", "gaussblur", "sharpen", "canny", "sobel", "morph",
        "hist_ismonotonic",
    ]

    /// How many `VipsImage` values exist in the process now: a run that keeps nothing per input
    /// comes back to where it started (a test checks this, and `pipeline run --log-level debug`
    /// prints it at the end of a run).
    public static var liveCount: Int { live.load(ordering: .relaxed) }

    // MARK: Loading

    /// Opens an image file. Only the header is read; pixels are decoded when something asks.
    ///
    /// - Parameters:
    ///   - path: the image file.
    ///   - options: libvips load options, for example `"shrink=2,fail_on=error"`; every option
    ///     must exist on the loader picked for the file: the first by libvips' priority that is
    ///     not blocked (`permittedLoader(file:)`).
    ///   - loader: the loader to read it with instead, by class name or nickname: the `loader`
    ///     of an image opened from the same file before, which then need not be looked for again.
    public static func open(file path: String, options: String = "", loader: String? = nil) throws(VipsError) -> VipsImage {
        try Vips.start()
        guard let image = pl_load_file(path, options, loader) else {
            throw VipsError.fromLibrary(operation: "load")
        }
        return VipsImage(taking: image)
    }

    /// Opens an image from `bytes`, libvips' one copy of them: opening a header and then its
    /// pixels, or several passes, copy nothing more (`open(data:options:)` copies each time).
    /// `options` and `loader` as for `open(file:options:loader:)`.
    public static func open(bytes: VipsBytes, options: String = "", loader: String? = nil) throws(VipsError) -> VipsImage {
        try Vips.start()
        guard let blob = bytes.blob else {
            throw VipsError(operation: "load", message: "no bytes to load")
        }
        guard let image = withExtendedLifetime(bytes, { pl_load_blob(blob, options, loader) }) else {
            throw VipsError.fromLibrary(operation: "load")
        }
        return VipsImage(taking: image)
    }

    /// Opens an image held in memory; the bytes are copied, so `data` may go away at once.
    public static func open(data: Data, options: String = "") throws(VipsError) -> VipsImage {
        try Vips.start()
        let image = data.withUnsafeBytes { bytes in
            pl_load_buffer(bytes.baseAddress, bytes.count, options)
        }
        guard let image else { throw VipsError.fromLibrary(operation: "load") }
        return VipsImage(taking: image)
    }

    /// Whether some libvips loader recognises the file's format (from its first bytes).
    public static func canLoad(file path: String) -> Bool {
        (try? Vips.start()) != nil && pl_find_loader_file(path) != nil
    }

    /// Whether some libvips loader recognises the format of `data`.
    public static func canLoad(data: Data) -> Bool {
        guard (try? Vips.start()) != nil else { return false }
        return data.withUnsafeBytes { pl_find_loader_buffer($0.baseAddress, $0.count) } != nil
    }

    // MARK: Header

    /// Width in pixels.
    public var width: Int { Int(vips_image_get_width(pointer)) }
    /// Height in pixels (of all pages, for a multi-page image).
    public var height: Int { Int(vips_image_get_height(pointer)) }
    /// Bands a pixel, alpha included.
    public var bands: Int { Int(vips_image_get_bands(pointer)) }
    /// Whether the last band is alpha, by libvips' reading of the bands and interpretation.
    public var hasAlpha: Bool { vips_image_hasalpha(pointer) != 0 }
    /// Whether the image's pixels are in memory already: asking about them computes nothing.
    public var isInMemory: Bool { pl_image_is_in_memory(pointer) != 0 }

    /// Whether the image has an alpha band that is everywhere at its most (255 for 8 bits,
    /// 65535 for 16), so that premultiplying by it changes nothing. Answered only for an 8 or
    /// 16-bit image whose pixels are in memory (one pass over the band); false otherwise, as an
    /// image still to be computed would be computed for it.
    public var hasOpaqueAlphaInMemory: Bool {
        let most: Double
        switch bandFormat {
        case .uchar: most = 255
        case .ushort: most = 65535
        default: return false
        }
        guard hasAlpha, isInMemory else { return false }
        var smallest = 0.0
        return withExtendedLifetime(self) { pl_band_min(pointer, Int32(bands - 1), &smallest) == 0 } && smallest == most
    }
    /// How many pages or frames the file holds (1 for a still image), as its loader counted
    /// them: read from the field, since libvips' own getter takes 10,000 or more for 1, which
    /// would make a long animation a still that no frame limit refuses.
    public var pageCount: Int { max(1, intField("n-pages") ?? 1) }
    /// The EXIF orientation, 1 to 8 (1 when the file has none).
    public var orientation: Int { Int(vips_image_get_orientation(pointer)) }
    /// Whether the image carries an ICC profile.
    public var hasICCProfile: Bool { pl_has_icc_profile(pointer) != 0 }
    /// How the bands are to be understood (sRGB, greyscale, CMYK, …).
    public var interpretation: Interpretation { Interpretation(vips_image_get_interpretation(pointer)) }
    /// The numeric type of each band.
    public var bandFormat: BandFormat { BandFormat(vips_image_get_format(pointer)) }

    /// The libvips loader that read this image, for example `jpegload_source`.
    public var loader: String? {
        pl_loader_name(pointer).map { String(cString: $0) }
    }

    /// Whether the image carries the metadata field `name` (for example `exif-data`).
    public func hasField(_ name: String) -> Bool {
        vips_image_get_typeof(pointer, name) != 0
    }

    /// The integer metadata field `name`, for example `interlaced`.
    public func intField(_ name: String) -> Int? {
        var value: Int32 = 0
        guard hasField(name), vips_image_get_int(pointer, name, &value) == 0 else { return nil }
        return Int(value)
    }

    /// The string metadata field `name`, for example `jpeg-chroma-subsample`.
    public func stringField(_ name: String) -> String? {
        var value: UnsafePointer<CChar>?
        guard hasField(name), vips_image_get_string(pointer, name, &value) == 0, let value else { return nil }
        return String(cString: value)
    }

    /// Width and height after the EXIF orientation is applied.
    public var orientedSize: (width: Int, height: Int) {
        vips_image_get_orientation_swap(pointer) != 0 ? (height, width) : (width, height)
    }

    // MARK: Plumbing

    /// Runs one libvips operation that makes a new image from this one.
    func derive(
        _ operation: String,
        _ call: (UnsafeMutablePointer<CVips.VipsImage>, UnsafeMutablePointer<UnsafeMutablePointer<CVips.VipsImage>?>) -> Int32
    ) throws(VipsError) -> VipsImage {
        var output: UnsafeMutablePointer<CVips.VipsImage>?
        // Keep self alive until the call returns: it owns the input pointer.
        let status = withExtendedLifetime(self) {
            Self.building(operation) { call(pointer, &output) }
        }
        guard status == 0, let output else {
            throw VipsError.fromLibrary(operation: operation)
        }
        return VipsImage(taking: output)
    }
}

/// Encoded bytes held in memory (a fetched file), copied once into libvips' memory (a blob)
/// and read where they are from then on: by libvips' loaders (`VipsImage.open(bytes:options:)`),
/// which keep the blob alive as long as an image needs it, and by the pipeline's own readers.
public final class VipsBytes: @unchecked Sendable {
    // Immutable once made; libvips counts the blob's references atomically.
    let blob: UnsafeMutablePointer<VipsBlob>?
    /// Where the bytes are, for as long as this object lives (nil when there are none).
    let base: UnsafeRawPointer?
    /// How many bytes.
    public let count: Int

    /// A copy of `data`.
    public init(_ data: Data) {
        let blob = data.isEmpty || (try? Vips.start()) == nil ? nil : data.withUnsafeBytes { pl_blob_copy($0.baseAddress, $0.count) }
        (self.blob, base, count) = (blob, blob.flatMap { pl_blob_data($0) }, blob == nil ? 0 : data.count)
    }

    deinit { if let blob { pl_blob_unref(blob) } }

    /// Lends the bytes to `body`.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withExtendedLifetime(self) { try body(UnsafeRawBufferPointer(start: base, count: count)) }
    }
}
