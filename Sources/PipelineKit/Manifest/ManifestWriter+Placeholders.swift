import Foundation
import Vips

/// A manifest entry's placeholders: from which of the output's files, kept from the previous
/// manifest or made again, and what the run says when none of the files can be read back.
extension ManifestWriter {
    /// The most outputs without placeholders the run's warnings name one by one.
    static let namedMissingPlaceholders = 5

    /// The narrowest file placeholders are made from when the output has one as wide: ThumbHash
    /// and BlurHash read at most 100 and 64 pixels, and need some to hold the image's shape.
    static let placeholderSourceWidth = 32

    /// The placeholders `output` asks for, and `placeholdersFrom`, made from its own files `own`
    /// (not its art crops): the placeholder stands in for the image an `<img>` shows. Kept from
    /// `before`, the previous manifest's entry, when every file of the output is up to date
    /// (`allUpToDate`) and the file they come from, the list and the settings are the same.
    func placeholders(
        of output: OutputDefinition, own: [WrittenOutput], allUpToDate: Bool, before: ImageManifest.Output?, source: String
    ) -> (placeholders: Placeholders?, from: String?) {
        // A JPEG last: it cannot hold the transparency the set's other formats keep and the page
        // shows, which `transparent` must tell. Then the smallest wide enough, else the widest:
        // a 1 px file would give a blur of one colour, and a square ThumbHash for a wide photo.
        // Of files of one size, AVIF last: the others decode sooner, and an AVIF sequence (an
        // animated output) is read through libavif. The next is tried when one cannot be read.
        let enough = max(output.placeholderSettings.lqipWidth, Self.placeholderSourceWidth)
        let preference: (WrittenOutput, WrittenOutput) -> Bool = {
            ($0.format == .jpeg ? 1 : 0, $0.size.pixelCount, $0.format == .avif ? 1 : 0)
                < ($1.format == .jpeg ? 1 : 0, $1.size.pixelCount, $1.format == .avif ? 1 : 0)
        }
        let candidates =
            own.filter { $0.size.width >= enough }.sorted(by: preference)
            + own.filter { $0.size.width < enough }.sorted { $0.size.pixelCount > $1.size.pixelCount }
        guard !output.placeholders.isEmpty, let first = candidates.first else { return (nil, nil) }
        let recipe = output.placeholderSettings.recipe(for: output.placeholders)
        let stamp = { (file: WrittenOutput) in file.fingerprint.map { "\($0) \(file.byteCount) \(recipe)" } }
        if allUpToDate, let from = stamp(first), before?.placeholdersFrom == from, let kept = before?.placeholders {
            return (kept, from)
        }
        var firstProblem: String?
        for candidate in candidates {
            do {
                return (try madePlaceholders(of: candidate, for: output), stamp(candidate))
            } catch {
                firstProblem = firstProblem ?? "\(candidate.path): \(error)"
            }
        }
        if let firstProblem {
            noteMissingPlaceholders(
                "the manifest has no placeholders for output \"\(output.name)\" of \(source): none of its \(candidates.count) "
                    + "files could be read (\(firstProblem))")
        }
        return (nil, nil)
    }

    /// Keeps `warning` for the run's end, naming the first few outputs and counting the rest.
    private func noteMissingPlaceholders(_ warning: String) {
        state.withLock { state in
            state.missingPlaceholderCount += 1
            if state.missingPlaceholders.count < Self.namedMissingPlaceholders { state.missingPlaceholders.append(warning) }
        }
    }

    /// The placeholders `output` declares, made from its file `file`: read where it is, or, in an
    /// object store, from a copy fetched to a temporary file, removed once they are made.
    private func madePlaceholders(of file: WrittenOutput, for output: OutputDefinition) throws -> Placeholders {
        guard ObjectStores.isObject(file.path) else { return try Self.placeholders(of: file, at: file.path, for: output) }
        // The version the run wrote or found, as long as it was: another is another file.
        let bytes = try stored.read(file, maxBytes: Int64(max(file.byteCount, 1)))
        let folder = FileManager.default.temporaryDirectory.path
        let copy = folder + "/.placeholder" + ImageWriter.temporaryMarker + UUID().uuidString
        guard FileManager.default.createFile(atPath: copy, contents: bytes) else {
            throw StoredOutputs.Failure(description: "\(file.path): its copy could not be kept in \(folder)")
        }
        defer { unlink(copy) }
        return try Self.placeholders(of: file, at: copy, for: output)
    }

    /// The placeholders `output` declares, of `file` read at `path`: of its first frame seen,
    /// and `transparent` when any frame lets the page through, since the page shows every one.
    private static func placeholders(of file: WrittenOutput, at path: String, for output: OutputDefinition) throws -> Placeholders {
        var made = try Placeholders(
            of: placeholderSource(file, at: path), kinds: Set(output.placeholders), settings: output.placeholderSettings)
        if made.transparent == nil, try anyFrameIsTransparent(file, at: path) { made.transparent = true }
        return made
    }

    /// Whether a frame of `file`, an animation read at `path`, has a pixel that is not opaque;
    /// false for a still.
    static func anyFrameIsTransparent(_ file: WrittenOutput, at path: String) throws(VipsError) -> Bool {
        if file.format == .avif, VipsImage.isAVIFSequence(file: path) {
            let reader = try AVIFSequenceReader(file: path)
            guard reader.hasAlpha else { return false }
            for _ in 0..<reader.frameCount {
                if try !Placeholders.isOpaque(reader.nextFrames().image) { return true }
            }
            return false
        }
        let first = try VipsImage.open(file: path)
        guard first.hasAlpha, let pages = first.intField("n-pages"), pages > 1 else { return false }
        return try !Placeholders.isOpaque(VipsImage.open(file: path, options: "n=-1"))
    }

    /// The picture of `file`, read at `path`, placeholders are made from: a still as libvips
    /// reads it; of an animation, its first frame in which anything is seen
    /// (`Placeholders.firstSeenFrame`). An AVIF sequence, which libvips does not read, is read by
    /// libavif.
    static func placeholderSource(_ file: WrittenOutput, at path: String) throws(VipsError) -> VipsImage {
        if file.format == .avif, VipsImage.isAVIFSequence(file: path) {
            let reader = try AVIFSequenceReader(file: path)
            // The file is the run's own output, of the size it recorded.
            guard reader.width * reader.height <= max(file.size.pixelCount, 1) else {
                throw VipsError(operation: "avif", message: "\(path) is \(reader.width)×\(reader.height), not the \(file.size) written")
            }
            return try Placeholders.firstSeenFrame(count: reader.frameCount) { _ throws(VipsError) in try reader.nextFrames().image }
        }
        let first = try VipsImage.open(file: path)
        guard first.hasAlpha, let pages = first.intField("n-pages"), pages > 1 else { return first }
        return try Placeholders.firstSeenFrame(count: pages) { page throws(VipsError) in
            page == 0 ? first : try VipsImage.open(file: path, options: "page=\(page)")
        }
    }
}
