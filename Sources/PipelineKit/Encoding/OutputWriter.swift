import Foundation
import Vips

/// The encode stage's work for one output: fills in its path, claims it for this run, encodes
/// the image and writes it atomically: a file by renaming it into place, a tile pyramid by
/// renaming it from its temporary folder (`TilePyramidWriter`), an S3 object by one whole `PUT`.
final class OutputWriter: Sendable {
    /// Paths written in this run, and by what: the one piece of state outputs share, so it
    /// has one owner.
    private let claimedPaths = Locked<[DiskPath: String]>([:])
    private let stores: ObjectStoreAccess
    /// The run's local inputs, which no commit may rename over.
    private let protectedInputs: ProtectedInputs

    /// Whether each path written is claimed for this run (`claim`).
    private let claimsPaths: Bool
    /// Other inputs' planned files that a file of another size than planned may not take.
    private let sizedPathReach: SizedPathReach

    /// `claimingPaths`: false when the plan knew every output's path and found them distinct
    /// (no `{width}` or `{height}` to wait for), so that nothing need be kept per output: a
    /// run of many inputs would otherwise hold every path it wrote to the end.
    init(
        stores: ObjectStoreAccess, protecting inputs: ProtectedInputs = ProtectedInputs(), claimingPaths: Bool = true,
        sizedPathReach: SizedPathReach = SizedPathReach()
    ) {
        self.stores = stores
        protectedInputs = inputs
        claimsPaths = claimingPaths
        self.sizedPathReach = sizedPathReach
    }

    /// User metadata names the runner keeps with each S3 output (after `x-amz-meta-`): what made
    /// it, for incremental runs on any machine, and its size, for their reports.
    enum MetadataName {
        static let fingerprint = "pipeline-fingerprint"
        static let width = "pipeline-width"
        static let height = "pipeline-height"
        /// The input's upright size (`WIDTHxHEIGHT`), for a manifest written from a run that
        /// found the object up to date.
        static let sourceSize = "pipeline-source-size"
        /// The quality a quality target's search chose, and the file's score (`searchedQuality`):
        /// what the report and the manifest give for an object found up to date.
        static let quality = "pipeline-quality"
        static let score = "pipeline-ssimulacra2"
        /// The object's length as it was put: a copy cut short that kept the rest of the
        /// metadata is not taken for up to date.
        static let bytes = "pipeline-bytes"

        /// `size` as `sourceSize` holds it.
        static func text(_ size: ImageSize) -> String { "\(size.width)x\(size.height)" }

        /// The size `sourceSize` holds, or nil for other text.
        static func size(_ text: String?) -> ImageSize? {
            guard let parts = text?.split(separator: "x"), parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1])
            else { return nil }
            return ImageSize(width: width, height: height)
        }
    }

    /// An output encoded and written, and for a file or a tile pyramid, still to be committed:
    /// flushed and renamed into place (`UncommittedOutput`), off the encode lane.
    struct Pending: Sendable {
        let output: WrittenOutput
        let file: (any UncommittedOutput)?
    }

    /// The paths of one input's outputs that a file made at another size than its steps declare
    /// may not take: those the plan gave the other outputs (and the other sets of widths of its
    /// own: another art crop, another format), and those such files of the others took first.
    /// Kept while the input is made, so nothing is held for a long run.
    final class InputPaths: Sendable {
        /// Whose a file is: its output, and its set of widths (art crop and format). Widths of
        /// one set may stand in for one file, the image's own width; two sets may not.
        private struct Owner: Equatable {
            let output: String
            let set: String?

            init(_ output: OutputDefinition) {
                self.output = output.name
                set = output.setDescription
            }

            /// The owner as `taker` names it: the set too, when both are of one output.
            func named(by taker: Owner) -> String {
                "output \"\(output)\"" + (output == taker.output ? set.map { " (\($0))" } ?? "" : "")
            }
        }
        /// The final planned paths (not those that wait for a size or a hash), with their owner.
        private let planned: [String: Owner]
        /// The paths files of other sizes took, with their owner.
        private let unplanned = Locked<[String: Owner]>([:])

        /// The paths of `jobs`' targets, the outputs of one input.
        init(_ jobs: [(target: OutputTarget, output: OutputDefinition)]) {
            var planned: [String: Owner] = [:]
            for (target, output) in jobs where target.isMade && !target.hasUnknownSizes && !target.namesHash {
                planned[target.plannedPath] = Owner(output)
            }
            self.planned = planned
        }

        /// Takes `path` for `output`'s file of another size than planned; the other owner whose
        /// path it is (planned, or taken first), named, or nil when it was free.
        func take(_ path: String, for output: OutputDefinition) -> String? {
            let owner = Owner(output)
            if let other = planned[path], other != owner { return other.named(by: owner) }
            return unplanned.withLock { taken in
                if let other = taken[path] { return other == owner ? nil : other.named(by: owner) }
                taken[path] = owner
                return nil
            }
        }
    }

    /// - Parameters:
    ///   - planned: the paths of the input's outputs, which a path filled with a size other
    ///     than the steps declare may not take.
    ///   - fingerprint: what made the output, kept with an S3 object; nil when not recorded.
    ///   - isCancelled: whether the run was cancelled, which stops an upload to a store.
    func write(
        _ image: VipsImage, output: OutputDefinition, target: OutputTarget, input: InputFile, planned: InputPaths = .init([]),
        fingerprint: String? = nil, sourceSize: ImageSize? = nil, isCancelled: @escaping @Sendable () -> Bool = { false }
    ) throws(ItemError) -> Pending {
        let path: String
        do {
            path = try target.path(width: image.width, height: image.frameSize.height)
        } catch {
            throw ItemError(.outputPath, stage: .encode, reason: error.message, underlying: error)
        }
        let claimant = "output \"\(output.name)\" of \(input.displayName)"
        // The plan found the paths distinct by the sizes the steps declare. A file of another
        // size (a set's width narrowed to a narrower input, a step that changes the size
        // without declaring it) has a path the plan did not compare: it may not take another
        // output's of the input. (Inputs' own values, such as {stem}, keep theirs apart.)
        let sizedAnew = !target.fillsPlannedSizes(width: image.width, height: image.frameSize.height)
        if sizedAnew, let other = planned.take(path, for: output) {
            throw ItemError(
                .outputPath, stage: .encode,
                reason: "its image is \(image.width)×\(image.frameSize.height), not the \(target.plannedSizeDescription) its steps "
                    + "declare, so its path \(path) is \(other)'s, which it does not write over; give the two "
                    + "outputs paths that differ in more than {width} and {height}")
        }
        // Nor another input's planned file: which is written first must not decide which stays.
        if sizedAnew || target.hasUnknownSizes, let other = sizedPathReach.owner(of: path) {
            throw ItemError(
                .outputPath, stage: .encode,
                reason: "its image is \(image.width)×\(image.frameSize.height), so its path \(path) is \(other), which it does not "
                    + "write over; give the outputs paths that differ in more than {width} and {height}")
        }
        // A hashed name is claimed once the bytes name it.
        if claimsPaths, !target.namesHash { try claim(path, for: claimant) }
        if target.isInStore {
            return Pending(
                output: try put(
                    image, output: output, input: input, fingerprint: fingerprint, sourceSize: sourceSize, isCancelled: isCancelled
                ) {
                    body throws(ItemError) in
                    guard target.namesHash else { return path }
                    let hashed = try Self.hashedPath(target, image: image, hash: SHA256.hex(body))
                    if claimsPaths { try claim(hashed, for: claimant) }
                    return hashed
                },
                file: nil)
        }
        if let tiles = output.tiles {
            let pyramid = try TilePyramidWriter.writeUncommitted(
                image, settings: tiles, to: path, root: target.root, protecting: protectedInputs)
            return Pending(
                output: WrittenOutput(
                    output: output.name, path: path, size: image.size, byteCount: pyramid.byteCount, format: output.encoder.format,
                    fingerprint: fingerprint),
                file: pyramid)
        }
        return try writeFile(image, output: output, target: target, input: input, path: path, claimant: claimant, fingerprint: fingerprint)
    }

    /// Encodes `image` into a temporary file beside `path`, renamed to its hashed name when the
    /// path names the hash, for the committer to flush and rename into place.
    private func writeFile(
        _ image: VipsImage, output: OutputDefinition, target: OutputTarget, input: InputFile, path: String, claimant: String,
        fingerprint: String?
    ) throws(ItemError) -> Pending {
        var dropped: [String] = []
        var search: QualitySearch.Outcome?
        var file = try ImageWriter.writeUncommitted(to: path, root: target.root, protecting: protectedInputs) {
            descriptor throws(ItemError) in
            do {
                let encoded = try ImageEncoder.encode(image, with: output.encoder, into: descriptor)
                (dropped, search) = (encoded.dropped, encoded.search)
            } catch {
                throw ItemError(.encoding, stage: .encode, reason: ItemError.reason(for: error), underlying: error)
            }
        }
        var finalPath = path
        if target.namesHash {
            do throws(ItemError) {
                finalPath = try Self.hashedPath(target, image: image, hash: file.contentHash())
                if claimsPaths { try claim(finalPath, for: claimant) }
            } catch {
                file.discard()
                throw error
            }
            file = file.renamed(to: finalPath)
        }
        var written = WrittenOutput(
            output: output.name, path: finalPath, size: image.frameSize, byteCount: file.byteCount,
            format: output.encoder.format, fingerprint: fingerprint,
            warnings: Self.warnings(dropped, input: input, output: output)
                + Self.warnings(search, output: output, input: input, path: finalPath),
            searchedQuality: Self.searched(search, output: output))
        written.searchEncodes = search?.encodes
        return Pending(output: written, file: file)
    }

    /// The path whose `{hash}` is filled with `hash`.
    private static func hashedPath(_ target: OutputTarget, image: VipsImage, hash: String) throws(ItemError) -> String {
        do {
            return try target.path(width: image.width, height: image.frameSize.height, hash: hash)
        } catch {
            throw ItemError(.outputPath, stage: .encode, reason: error.message, underlying: error)
        }
    }

    /// - Parameter finalPath: the path for the encoded body: the target's, with its `{hash}` filled in.
    private func put(
        _ image: VipsImage, output: OutputDefinition, input: InputFile, fingerprint: String?, sourceSize: ImageSize?,
        isCancelled: @escaping @Sendable () -> Bool, finalPath: (Data) throws(ItemError) -> String
    ) throws(ItemError) -> WrittenOutput {
        let body: Data
        let prepared: ImageEncoder.Prepared
        let search: QualitySearch.Outcome?
        do {
            prepared = try ImageEncoder.prepare(image, for: output.encoder)
            (body, search) = try ImageEncoder.encodedBytes(prepared, with: output.encoder)
        } catch {
            throw ItemError(.encoding, stage: .encode, reason: ItemError.reason(for: error), underlying: error)
        }
        let path = try finalPath(body)
        let store = try stores.store(forWriting: path)
        var metadata = output.metadata
        if let fingerprint { metadata[MetadataName.fingerprint] = fingerprint }
        metadata[MetadataName.width] = String(image.width)
        metadata[MetadataName.height] = String(image.frameSize.height)
        if let sourceSize { metadata[MetadataName.sourceSize] = MetadataName.text(sourceSize) }
        metadata[MetadataName.bytes] = String(body.count)
        let searched = Self.searched(search, output: output)
        if let searched {
            metadata[MetadataName.quality] = String(searched.quality)
            // Written as Swift writes a Double, which reads back the same number.
            metadata[MetadataName.score] = String(searched.score)
        }
        // A cancelled run stops its upload, between attempts or during one: the store makes the
        // object whole or not at all, so none is left half-written, and a store that does not
        // answer cannot hold the run's end for its timeouts and retries.
        let version = try store.put(
            path, body: body, contentType: output.encoder.format.mimeType, cacheControl: output.cacheControl, metadata: metadata,
            isCancelled: isCancelled)
        var written = WrittenOutput(
            output: output.name, path: path, size: image.frameSize, byteCount: body.count, format: output.encoder.format,
            fingerprint: fingerprint,
            warnings: Self.warnings(prepared.dropped, input: input, output: output)
                + Self.warnings(search, output: output, input: input, path: path),
            searchedQuality: searched)
        written.searchEncodes = search?.encodes
        written.storedVersion = version
        return written
    }

    /// One warning line for each metadata field of `input` left out of `output`'s file, each
    /// `dropped` naming the field and why.
    static func warnings(_ dropped: [String], input: InputFile, output: OutputDefinition) -> [String] {
        dropped.map { "\(input.displayName) → \(output.name): dropped the metadata field \($0)" }
    }

    /// What a quality search chose, for the report, events and manifest.
    static func searched(_ search: QualitySearch.Outcome?, output: OutputDefinition) -> SearchedQuality? {
        guard let search, let target = output.encoder.qualityTarget else { return nil }
        return SearchedQuality(quality: search.quality, score: search.score, target: target.ssimulacra2)
    }

    /// A warning when no quality the search could choose reached the target: the file at
    /// `path` is the best it found. Named by its file name, which tells the widths and art
    /// crops of one output apart.
    static func warnings(_ search: QualitySearch.Outcome?, output: OutputDefinition, input: InputFile, path: String) -> [String] {
        guard let search, !search.reached, let target = output.encoder.qualityTarget else { return [] }
        return warnings(
            SearchedQuality(quality: search.quality, score: search.score, target: target.ssimulacra2), output: output, input: input,
            path: path)
    }

    /// The warning of a file whose search, in this run or the one that made it, fell short of
    /// its target; none when it reached it. A file found up to date is as short as when made.
    static func warnings(_ searched: SearchedQuality?, output: OutputDefinition, input: InputFile, path: String) -> [String] {
        guard let searched, !searched.reached else { return [] }
        let (score, goal) = searched.score.formatted(places: 1, apartFrom: searched.target)
        return [
            "\(input.displayName): output \"\(output.name)\" (\(output.encoder.format.rawValue)) reached SSIMULACRA 2 "
                + "\(score) at quality \(searched.quality), short of the target \(goal); "
                + "the file written, \((path as NSString).lastPathComponent), is the best the search found"
        ]
    }

    private func claim(_ path: String, for claimant: String) throws(ItemError) {
        let earlier = claimedPaths.withLock { claimed -> String? in
            if let earlier = claimed[DiskPath(path)] { return earlier }
            claimed[DiskPath(path)] = claimant
            return nil
        }
        if let earlier {
            throw ItemError(.outputPath, stage: .encode, reason: "\(path) was already written in this run by \(earlier)")
        }
    }
}
