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
    /// The refusal of an input that only a loader libvips marks untrusted would read (SVG,
    /// PDF) when the file does not name that format in `decompress.allowUntrusted`; nil for
    /// any other input. A format the file allows has its loader unblocked in libvips, which
    /// otherwise keeps every untrusted loader blocked (`Vips.prepareForUntrustedInput`), so that
    /// a run allowing nothing has libvips' own block behind this check.
    ///
    /// Runs the format sniffers, which may write libvips' shared error buffer: call it where a
    /// decode would (through `LibvipsErrorText.gate`).
    func untrustedLoaderRefusal(_ source: EncodedSource) -> ItemError? {
        untrustedLoaderRefusal(loader: Self.loaderClass(source))
    }

    /// The refusal for an input that the loader class `loader` would read (from
    /// `loaderClass(_:)`), as `untrustedLoaderRefusal(_:)` gives it, for a caller that sniffed
    /// the input already: each sniff runs every loader's check of the file's first bytes.
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
}
