import Foundation
import Vips

/// libvips' error text, turned into the reasons a report gives: the lines of a failure that
/// belong to this input, with its path left out, or a clear reason when libvips gave none.
///
/// libvips keeps one error buffer for the whole process, and its format sniffers clear it:
/// while other decodes run, a failure's message may vanish, or be another input's. So decodes,
/// and whatever may write that buffer, run side by side through `gate`, and a decode whose
/// reason comes from that buffer is decoded again alone (`ImageDecoder`), once the others have
/// finished and before new ones start: the reason read then is this input's.
/// Work outside a decode that may write libvips' shared error buffer, for steps in other
/// modules: run beside the decodes, never while one reads its own reason alone.
package enum LibvipsErrorBuffer {
    /// Runs `body` through `LibvipsErrorText.gate`, shared. Not to be called from within the
    /// gate: a caller waiting to go alone would hold the second entry back for good.
    package static func sharing<Result>(_ body: () -> Result) -> Result {
        LibvipsErrorText.gate.shared(body)
    }
}

enum LibvipsErrorText {
    /// The gate every use of libvips' error buffer passes: shared, or alone to read a reason.
    static let gate = ExclusiveGate()

    /// The item error a libvips failure to decode `source` stands for: its own message
    /// (`ownMessage`), else the warning a loader logged on this thread, else a reason saying
    /// libvips gave none. Each reason comes through libvips' shared error buffer.
    static func itemError(for error: any Error, source: EncodedSource) -> ItemError {
        let kind: ItemError.Kind = ItemError.isUnknownFormat(error) ? .unsupportedFormat : .undecodable
        if let own = ownMessage(error, source: source) {
            return ItemError(kind, stage: .decompress, reason: own, underlying: error)
        }
        // Some loaders give their reason only as a warning, logged on this thread.
        if let warning = Vips.lastWarning {
            return ItemError(kind, stage: .decompress, reason: warning, underlying: error)
        }
        let operation = (error as? VipsError)?.operation ?? "load"
        return ItemError(
            kind, stage: .decompress, reason: "libvips could not decode it and gave no reason (in \(operation))",
            underlying: error)
    }

    /// The lines of a libvips failure that belong to this input, with its path left out (the
    /// report names the input already); nil when nothing of the message is left.
    static func ownMessage(_ error: any Error, source: EncodedSource) -> String? {
        guard let vipsError = error as? VipsError else { return String(describing: error) }
        // libvips reports a descriptor it could not get as a bad one, a write error or an unknown format.
        if OpenFileLimit.isReached || OpenFileLimit.isReported(in: vipsError.message) { return OpenFileLimit.reason }
        // The file by the path its reader opened (a pinned file's descriptor) and by its own.
        var paths: [String] = []
        if case .file(let file, _, _, let name) = source { paths = [file] + (name.map { [$0] } ?? []) }
        var lines: [String] = []
        for line in vipsError.message.components(separatedBy: "; ") where !line.isEmpty {
            let namesAFile = line.hasPrefix("/") || line.contains("\"/")
            if namesAFile, !paths.contains(where: { line.contains($0) }) { continue }
            var own = line
            for path in paths {
                own = own.replacingOccurrences(of: "\"\(path)\"", with: "the file")
                    .replacingOccurrences(of: "\(path): ", with: "")
                    .replacingOccurrences(of: path, with: "the file")
            }
            if !lines.contains(own) { lines.append(own) }
        }
        // libvips' "bad seek to N" beside the loader's own reason: `ItemError.reason` leaves it out.
        guard !lines.isEmpty else { return nil }
        return ItemError.reason(for: VipsError(operation: vipsError.operation, message: lines.joined(separator: "; ")))
    }
}
