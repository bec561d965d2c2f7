import Vips

extension DecompressSettings.UntrustedFormat {
    /// The libvips loader class whose file, buffer and source variants read this format.
    var loaderClass: String {
        switch self {
        case .svg: "VipsForeignLoadSvg"
        case .pdf: "VipsForeignLoadPdf"
        }
    }

    /// The format read by `loader` (a loader's class name, as libvips' format sniffers give
    /// it), when that is one of these; nil otherwise.
    init?(loader: String) {
        guard let format = Self.allCases.first(where: { loader.hasPrefix($0.loaderClass) }) else { return nil }
        self = format
    }
}

extension ImageDecoder {
    /// Loaders libvips marks untrusted are blocked before the first decode: a pipeline reads
    /// files from anywhere, and those loaders were not made for hostile ones. Evaluated once.
    private static let preparedForUntrustedInput: Bool = (try? Vips.prepareForUntrustedInput()) != nil

    /// Why no loader may read `source`, or nil when one may. The loaders the run permits are
    /// asked first, and most inputs stop there; only when none reads the input are the blocked
    /// ones asked too (libvips' own search, which runs OpenSlide's test of the file), to refuse an
    /// untrusted format by name, or to unblock one the pipeline file allows.
    ///
    /// May write libvips' shared error buffer: call it where a decode would (through
    /// `LibvipsErrorText.gate`).
    func unreadableReason(_ source: EncodedSource) -> ItemError? {
        guard Self.preparedForUntrustedInput else {
            return ItemError(.unsupportedFormat, stage: .decompress, reason: ItemError.unknownFormat)
        }
        // libavif reads an AVIF image sequence, which no libvips loader takes.
        if Self.isAVIFSequence(source) { return nil }
        // An untrusted loader another run in this process unblocked is still refused here unless
        // this file allows its format: libvips' block is process-wide.
        if let loader = Self.permittedLoader(source) { return untrustedLoaderRefusal(loader: loader) }
        if let refusal = untrustedLoaderRefusal(loader: Self.loaderClass(source)) { return refusal }
        // Unblocked just now, if the file allows the format, or asked again in case a file
        // descriptor was freed meanwhile.
        if Self.permittedLoader(source) != nil { return nil }
        // The loaders cannot even open a file when no descriptor is left: that is not an
        // unknown format.
        if OpenFileLimit.isReached { return ItemError(.unreadable, stage: .decompress, reason: OpenFileLimit.reason) }
        // A format libvips knows, cut short where its loader's test reads (a TIFF's directory).
        if let damage = FileDamage.reason(in: source) { return ItemError(.undecodable, stage: .decompress, reason: damage) }
        return ItemError(.unsupportedFormat, stage: .decompress, reason: ItemError.unknownFormat)
    }

    /// The refusal of an input that only a loader libvips marks untrusted would read (SVG,
    /// PDF) when the file does not name that format in `decompress.allowUntrusted`; nil for
    /// any other input. A format the file allows has its loader unblocked in libvips, which
    /// otherwise keeps every untrusted loader blocked (`Vips.prepareForUntrustedInput`), so that
    /// a run allowing nothing has libvips' own block behind this check.
    ///
    /// Runs every loader's test, as `unreadableReason(_:)` does for an input no permitted loader
    /// reads: call it through `LibvipsErrorText.gate`.
    func untrustedLoaderRefusal(_ source: EncodedSource) -> ItemError? {
        untrustedLoaderRefusal(loader: Self.loaderClass(source))
    }

    /// The refusal for an input that the loader class `loader` would read (from
    /// `loaderClass(_:)`), as `untrustedLoaderRefusal(_:)` gives it.
    func untrustedLoaderRefusal(loader: String?) -> ItemError? {
        guard let loader, let format = DecompressSettings.UntrustedFormat(loader: loader) else { return nil }
        if settings.allowUntrusted.contains(format) {
            Vips.unblockLoader(format.loaderClass)
            return nil
        }
        return ItemError(
            .unsupportedFormat, stage: .decompress,
            reason:
                "\(format == .svg ? "an" : "a") \(format.rawValue.uppercased()) file, which libvips reads only with a loader not made for untrusted files; "
                + "to read it, add \"\(format.rawValue)\" to decompress.allowUntrusted")
    }

    /// The libvips loader class that would read `source`, blocked or not; nil when none knows
    /// its format. May write libvips' shared error buffer, as `untrustedLoaderRefusal(_:)`.
    static func loaderClass(_ source: EncodedSource) -> String? {
        switch source {
        case .file(let path, _, _, _): VipsImage.loaderClass(file: path)
        case .memory(let bytes): VipsImage.loaderClass(bytes: bytes)
        }
    }

    /// The first loader class that is not blocked and reads `source`; nil when none does.
    /// Decided from return values, so the answer cannot be garbled by another thread's use of
    /// libvips' shared error buffer.
    static func permittedLoader(_ source: EncodedSource) -> String? {
        switch source {
        case .file(let path, _, _, _): VipsImage.permittedLoader(file: path)
        case .memory(let bytes): VipsImage.permittedLoader(bytes: bytes)
        }
    }
}
