import CVips
import Foundation

extension Vips {
    /// Prepares libvips for files from anywhere; safe to call any number of times.
    ///
    /// - Blocks, for the whole process, every operation libvips marks untrusted: loaders that
    ///   were not built or fuzzed for hostile files (ImageMagick, PDF, SVG, JPEG 2000, JPEG XL,
    ///   PPM, FITS, the vips format, …). Files only they would read then fail as unreadable.
    ///   libvips recommends this for untrusted input; it cannot be undone per image.
    /// - Keeps the last warning of each thread (see `lastWarning`) instead of dropping it.
    public static func prepareForUntrustedInput() throws(VipsError) {
        if let failure = untrustedInputSetup.failure { throw failure }
    }

    /// The last warning libvips logged on the calling thread since `clearLastWarning()`, or
    /// nil. Some loaders fail with an empty error message and give their reason only as a
    /// warning. Always nil before `prepareForUntrustedInput()`.
    public static var lastWarning: String? {
        guard let key = untrustedInputSetup.warningKey else { return nil }
        let text = String(cString: pl_last_warning(key))
        return text.isEmpty ? nil : text
    }

    /// Forgets the calling thread's last warning, before a call whose warnings matter.
    public static func clearLastWarning() {
        guard let key = untrustedInputSetup.warningKey else { return }
        pl_clear_warning(key)
    }

    /// Empties libvips' process-wide error buffer, so the next failure's message is its own
    /// (as long as nothing else fails meanwhile).
    public static func clearErrors() {
        vips_error_clear()
    }

    private struct UntrustedInputSetup: @unchecked Sendable {
        let failure: VipsError?
        /// The pthread key of the per-thread warning buffers; set once, never freed, only
        /// passed to the shim functions, which are safe on any thread.
        let warningKey: UnsafeMutableRawPointer?
    }

    private static let untrustedInputSetup: UntrustedInputSetup = {
        do throws(VipsError) {
            try start()
        } catch {
            return UntrustedInputSetup(failure: error, warningKey: nil)
        }
        pl_block_untrusted_operations()
        return UntrustedInputSetup(failure: nil, warningKey: pl_remember_warnings())
    }()
}

extension VipsImage {
    /// Makes every metadata blob (EXIF, XMP, ICC, …) a copy this image owns, so the image may
    /// outlive the loader that read it. libvips 8.14's HEIF loader attaches blobs that point
    /// into memory freed with the loader's own image; saving a decoded copy after that read
    /// freed memory (found by the decode fuzz test under AddressSanitizer, with a valid AVIF).
    ///
    /// Changes the image in place: call it only on a new image nobody else has seen, such as
    /// the result of `rendered()`, while the images it was made from are still alive.
    public func ownMetadata() {
        withExtendedLifetime(self) { pl_own_metadata_blobs(pointer) }
    }

    /// The first libvips loader, by libvips' priority, that is not blocked and reads the file,
    /// judged from its first bytes: its class name; nil when no loader may read it, or the file
    /// cannot be opened. The blocked loaders are not asked, unlike in libvips' own search, which
    /// is what each load does too (`open(file:options:)`). Decided from return values, never
    /// from the shared error buffer.
    public static func permittedLoader(file path: String) -> String? {
        guard (try? Vips.start()) != nil, let name = pl_find_permitted_loader_file(path) else { return nil }
        return String(cString: name)
    }

    /// The loader that reads `bytes`, of those not blocked; see `permittedLoader(file:)`.
    public static func permittedLoader(bytes: VipsBytes) -> String? {
        guard (try? Vips.start()) != nil, let blob = bytes.blob else { return nil }
        let name = withExtendedLifetime(bytes) { pl_find_permitted_loader_blob(blob) }
        return name.map { String(cString: $0) }
    }
}
