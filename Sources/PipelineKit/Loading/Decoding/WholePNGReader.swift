import Vips

/// Reads a common PNG whole, inflated by libdeflate (`VipsImage.decodeWholePNG`), while the
/// run's allowance for such reads (`MemoryAccountant.wholePNGReads`) has room for it now, and so
/// has the target of decodes that hold a full-size image (`MemoryAccountant.unstreamedDecodes`),
/// which such a read is one of. One that would go over either streams row by row instead
/// (`PNGRowsAheadReader`, or libvips' loader), a little slower but in little memory. zlib's
/// inflate is much of a PNG run's time, and libdeflate inflates the same data several times as
/// fast (Benchmarks/RESULTS.md).
struct WholePNGReader: FastReader {
    /// The allowance the reads are admitted to.
    let allowance: MemoryAdmission
    /// The decodes that hold a full-size image, which a read takes room beside too
    /// (`MemoryAdmission.admitBesideNow`): a PNG read whole does not meet a large progressive
    /// JPEG's decode, nor that decode the read; PNGs read whole weigh only against each other's
    /// `allowance`. Nil outside a run.
    var fullSizeDecodes: MemoryAdmission? = nil

    /// What reading the PNG `header` describes whole would hold (its rows inflated, and its
    /// file), or 0 when it always streams: a kind the reader does not take, or larger than
    /// the allowance ever is (`MemoryAccountant.wholePNGReadsCeiling`).
    static func heldBytes(_ header: VipsImage, fileBytes: Int) -> Int64 {
        guard let bytes = VipsImage.wholePNGBytes(header: header, fileBytes: fileBytes).map(Int64.init),
            bytes <= MemoryAccountant.wholePNGReadsCeiling
        else { return 0 }
        return bytes
    }

    /// As `heldBytes(_:fileBytes:)` for a local file, whose own header is read too (for
    /// `explain`, which should not count a PNG the reader would decline on opening it).
    static func heldBytes(file path: String, header: VipsImage, fileBytes: Int) -> Int64 {
        guard let bytes = VipsImage.wholePNGBytes(file: path, header: header, fileBytes: fileBytes).map(Int64.init),
            bytes <= MemoryAccountant.wholePNGReadsCeiling
        else { return 0 }
        return bytes
    }

    /// 0: these reads have an allowance of their own, which estimates leave out.
    func heldBytes(_ source: EncodedSource, header: VipsImage) -> Int64 { 0 }

    /// The PNG read whole, when it is one this reader takes and the allowance has room for it
    /// now; nil leaves it to the row readers, which then read it row by row and report any
    /// fault in it. The file's part of the allowance is given back here, its copy freed once
    /// inflated; the rows' part when the pass releases the read.
    func read(_ source: EncodedSource, header: VipsImage, pass: DecodePass) -> FastRead? {
        let needed = Self.heldBytes(header, fileBytes: source.byteCount)
        guard needed > 0, allowance.admitNow(needed) else { return nil }
        guard fullSizeDecodes?.admitBesideNow(needed) ?? true else {
            allowance.release(needed)
            return nil
        }
        let release = { @Sendable [allowance, fullSizeDecodes] (bytes: Int64) in
            allowance.release(bytes)
            fullSizeDecodes?.releaseBeside(bytes)
        }
        let image =
            switch source {
            case .file(let path, _, _, _): VipsImage.decodeWholePNG(file: path, header: header)
            case .memory(let bytes): VipsImage.decodeWholePNG(bytes: bytes, header: header)
            }
        guard let image else {
            release(needed)
            return nil
        }
        // The file's copy is gone once its rows are inflated: only the rows stay held.
        let file = Int64(source.byteCount)
        release(file)
        return FastRead(image: image) { release(needed - file) }
    }
}
