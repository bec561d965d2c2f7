import Foundation
import Vips

/// Makes the manifest's entry of each source as the run completes it, and at the run's end
/// writes the manifest the pipeline file asks for.
///
/// The manifest is made from the run's reports, so an incremental run gives the same entries for
/// outputs that were up to date (the journal knows their sizes and bytes), an input that vanished
/// has no entry, and an input or output that failed keeps its earlier entry while its files are
/// there (`keptEntries(of:earlier:)`). Placeholders are computed from each output's smallest file
/// (after its steps: a cover crop's placeholder is of the crop), and taken from the previous
/// manifest only when every file of that output was up to date and the smallest is the very
/// file they were computed from (the same fingerprint and size), with the same placeholder list
/// and settings: a killed run may have made the files again, and recorded them in the journal,
/// without writing its manifest, and a changed list must be computed. A cancelled
/// run writes the entries of the sources it finished and keeps the old ones of the others
/// (`writeCutShort()`).
///
/// Entries are made on the run's lanes, each source's when it completes (`add(_:)`), and kept
/// on disk (`ManifestSpool`), so neither the time nor the memory of a run of many inputs piles
/// up at its end.
final class ManifestWriter: Sendable {
    let settings: ManifestSettings
    let definition: PipelineDefinition
    /// The manifest written before, to keep placeholders of files that did not change.
    private let previous: PreviousManifest?
    /// Whether the run makes only some of the plan's sources (`RunPlan.keeping(_:)`, a server's
    /// run for a request): the entries of the others are kept as the manifest has them.
    private let keepsOtherEntries: Bool
    /// Each output's formats in the order it lists them, each once: the order of its entry's files.
    private let formatOrders: [String: [EncoderSettings.Format]]
    /// The path components of the manifest's folder and of `settings.urlRoot`, which each
    /// file's path and URL are relative to.
    private let manifestFolder: [String]
    private let urlRoot: [String]
    /// Reads back the files the run put in object stores, to make their placeholders.
    let stored: StoredOutputs
    /// A shard's plan, whose manifest says which run wrote it (`ImageManifest.ShardRun`); nil
    /// for a run of every input.
    private let shardPlan: RunPlan?
    /// The versions of the shard's inputs as the run began, for its record.
    private let shardVersions: ImageManifest.ShardRun.InputsDigest?
    let state = Locked(State())

    struct State {
        /// The entries made so far, from the first.
        var spool: ManifestSpool?
        /// Why they cannot be kept.
        var problem: ReportWriterError?
        /// When other entries are kept, the sources this run reported, made or not: theirs are
        /// this run's to give or to drop.
        var reported: Set<String> = []
        /// How the write that took this run's entries went, once one has (runs of parts only).
        var written: Result<Void, ReportWriterError>?
        /// Sources the run was cancelled in the middle of, after it made some of their files.
        var cutShort: Set<String> = []
        /// The warnings for the first outputs whose placeholders could not be made, none of
        /// their files being readable (`namedMissingPlaceholders`), and how many there were.
        var missingPlaceholders: [String] = []
        var missingPlaceholderCount = 0
        /// The first file named whose URL would climb above the folder `urlPrefix` serves.
        var urlsOutsideRoot: String?
    }

    /// Where manifests are written, one at a time in this process: runs of parts of one plan (a
    /// server's, one for each request) each read the manifest as it is and write it with their
    /// entries. A lane of its own, as the disk-bound stages have: a write blocks its thread for
    /// as long as the manifest is large, and runs waiting their turn hold no thread.
    static let lane = DispatchQueue(label: "pipeline.manifest")

    /// Runs of parts of a plan that have ended and wait to write, by the manifest's path, in
    /// the order they ended. The first write on the lane takes every waiting run's entries, so
    /// runs that end while a write is under way rewrite the manifest once between them rather
    /// than once each: the whole file is written every time, which takes seconds on a large
    /// manifest.
    static let waiting = Locked<[String: [ManifestWriter]]>([:])
    /// Writes made for runs of parts, by the manifest's path, for tests to tell runs written
    /// together from runs written one by one.
    static let writesOfParts = Locked<[String: Int]>([:])

    init(
        settings: ManifestSettings, definition: PipelineDefinition, keepsOtherEntries: Bool = false, stored: StoredOutputs,
        shardPlan: RunPlan? = nil
    ) {
        self.settings = settings
        self.definition = definition
        self.shardPlan = shardPlan?.shard == nil ? nil : shardPlan
        // As the run begins: an input changed during it is one its entries may not be of.
        shardVersions = self.shardPlan.map(ImageManifest.ShardRun.versionsDigest(of:))
        self.keepsOtherEntries = keepsOtherEntries
        self.stored = stored
        previous = PreviousManifest(path: settings.file.path)
        var formatOrders: [String: [EncoderSettings.Format]] = [:]
        for output in definition.outputs where !(formatOrders[output.name]?.contains(output.encoder.format) ?? false) {
            formatOrders[output.name, default: []].append(output.encoder.format)
        }
        self.formatOrders = formatOrders
        manifestFolder = settings.file.deletingLastPathComponent().standardizedFileURL.pathComponents
        urlRoot = settings.urlRoot.standardizedFileURL.pathComponents
    }

    /// Makes and keeps the entries of one source's reports: one per listing that wrote something.
    func add(_ reports: [ItemReport]) {
        let made = reports.compactMap(entry(for:))
        let texts = Result { () throws(ReportWriterError) in
            try made.map { entry throws(ReportWriterError) in (source: entry.source, text: try ManifestSpool.entryText(entry)) }
        }
        state.withLock { state in
            if keepsOtherEntries { state.reported.formUnion(reports.map(\.input.displayName)) }
            guard !made.isEmpty, state.problem == nil else { return }
            do throws(ReportWriterError) {
                let spool = if let kept = state.spool { kept } else { try makeSpool() }
                state.spool = spool
                for entry in try texts.get() { try spool.append(source: entry.source, text: entry.text) }
            } catch {
                state.problem = error
            }
        }
    }

    /// Notes that the run was cancelled in the middle of `source` after making some of its
    /// files: the manifest of the run cut short gives it no entry, where the old one would
    /// describe files that are no longer there.
    func cutShort(_ source: String) {
        state.withLock { state in
            state.cutShort.insert(source)
            if keepsOtherEntries { state.reported.insert(source) }
        }
    }

    /// Writes the manifest of a run that was cancelled (SIGINT, SIGTERM) on its lane: the entries
    /// of the sources it finished, none for a source it left part-made, and every other entry as
    /// the manifest on disk has it, since the run did not touch those files. Returns why it could
    /// not, or nil.
    func writeCutShort() async -> String? {
        // A run of part of a plan keeps the other entries anyway; its part-made sources are
        // among those it reported, so they lose their entries there.
        if keepsOtherEntries { return await write() }
        return await runBlocking(on: Self.lane) {
            self.describe(Result { () throws(ReportWriterError) in try self.writeFinishedAndKeptEntries() })
        }
    }

    /// Writes the run's entries and the previous manifest's entries of every other source but
    /// those cut short; runs on the lane.
    private func writeFinishedAndKeptEntries() throws(ReportWriterError) {
        let (kept, problem, cutShort) = state.withLock { ($0.spool, $0.problem, $0.cutShort) }
        if let problem { throw problem }
        let spool = try makeSpool()
        var made = cutShort
        try kept?.forEachEntry { source, text throws(ReportWriterError) in
            made.insert(source)
            try spool.append(source: source, text: text)
        }
        try Self.holdingLock(on: folder) { () throws(ReportWriterError) in
            try PreviousManifest(path: settings.file.path)?.forEachEntryText { source, text throws(ReportWriterError) in
                guard !made.contains(source) else { return }
                try spool.append(source: source, text: text)
            }
            try spool.writeManifest(pipeline: definition.name, shard: shardRun(finished: false), to: settings.file.path)
        }
    }

    /// Writes the manifest on its lane; returns why it could not, or nil.
    func write() async -> String? {
        if keepsOtherEntries { Self.waiting.withLock { $0[settings.file.path, default: []].append(self) } }
        return await runBlocking(on: Self.lane) { self.writeNow() }
    }

    /// Writes the manifest; runs on the lane.
    private func writeNow() -> String? {
        describe(keepsOtherEntries ? writeWithWaitingParts() : Result { () throws(ReportWriterError) in try writeWhole() })
    }

    /// Nil for a write that went well, else why the manifest could not be written.
    private func describe(_ written: Result<Void, ReportWriterError>) -> String? {
        do throws(ReportWriterError) {
            try written.get()
            return nil
        } catch {
            return
                "cannot write the manifest \(settings.file.path): \(error.path.isEmpty || error.path == settings.file.path ? "" : error.path + ": ")\(error.reason)"
        }
    }

    /// Writes the run's entries alone: a run of the whole plan gives every entry.
    private func writeWhole() throws(ReportWriterError) {
        // Every entry is in: the run has ended.
        let (kept, problem) = state.withLock { ($0.spool, $0.problem) }
        if let problem { throw problem }
        // No entry made: the manifest is written with none.
        let spool = if let kept { kept } else { try makeSpool() }
        try spool.writeManifest(pipeline: definition.name, shard: shardRun(finished: true), to: settings.file.path)
    }

    /// What a shard's manifest says of its run; nil for a run of every input.
    private func shardRun(finished: Bool) -> ImageManifest.ShardRun? {
        guard let shardPlan, let shard = shardPlan.shard else { return nil }
        return ImageManifest.ShardRun(
            shard: shard, inputs: ImageManifest.ShardRun.inputsDigest(of: shardPlan), versions: shardVersions, definition: definition,
            finished: finished)
    }

    /// Writes the entries of this run of part of a plan, with those of every other run waiting
    /// to write the same manifest, unless an earlier write on the lane has taken them.
    private func writeWithWaitingParts() -> Result<Void, ReportWriterError> {
        if let written = state.withLock(\.written) { return written }
        let group = Self.waiting.withLock { $0.removeValue(forKey: settings.file.path) ?? [] }
        let written = Result { () throws(ReportWriterError) in try writeParts(group) }
        for writer in group {
            writer.state.withLock { state in
                // A run whose entries could not be kept was left out of the write.
                state.written = state.problem.map { .failure($0) } ?? written
            }
        }
        return state.withLock { $0.written } ?? written
    }

    /// Writes the entries of the runs of parts in `group` (in the order they ended), and every
    /// entry of the manifest as it is now for a source none of them reported. Of two runs that
    /// reported one source, the later one's entry stands, or its lack of one.
    private func writeParts(_ group: [ManifestWriter]) throws(ReportWriterError) {
        // A run whose entries could not be kept gives none, and its sources keep theirs.
        let parts = group.map { writer in writer.state.withLock { (kept: $0.spool, sources: $0.reported, problem: $0.problem) } }
            .filter { $0.problem == nil }
        guard !parts.isEmpty else { return }
        let spool = try makeSpool()
        var reported: Set<String> = []
        for (kept, sources, _) in parts.reversed() {
            try kept?.forEachEntry { source, text throws(ReportWriterError) in
                guard !reported.contains(source) else { return }
                try spool.append(source: source, text: text)
            }
            reported.formUnion(sources)
        }
        try Self.holdingLock(on: folder) { () throws(ReportWriterError) in
            // As it is now, not as a run found it, when another write has replaced it since.
            let now = FileStamp(path: settings.file.path)
            let current = group.lazy.compactMap(\.previous).first { $0.stamp != nil && $0.stamp == now }
            try (current ?? PreviousManifest(path: settings.file.path))?.forEachEntryText { source, text throws(ReportWriterError) in
                guard !reported.contains(source) else { return }
                try spool.append(source: source, text: text)
            }
            try spool.writeManifest(pipeline: definition.name, to: settings.file.path)
        }
        Self.writesOfParts.withLock { $0[settings.file.path, default: 0] += 1 }
    }

    private var folder: String { settings.file.deletingLastPathComponent().path }

    /// Whether the manifest the run found has an entry for the input named `source`.
    func hasEarlierEntry(for source: String) -> Bool { previous?.entry(for: source) != nil }

    private func makeSpool() throws(ReportWriterError) -> ManifestSpool {
        try createFolder()
        return try ManifestSpool(folder: folder)
    }

    private func createFolder() throws(ReportWriterError) {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw ReportWriterError(path: folder, reason: ErrorText.reason(error))
        }
    }

    private func entry(for report: ItemReport) -> ImageManifest.Input? {
        guard !report.written.isEmpty || !report.failures.isEmpty else { return nil }
        let source = report.input.displayName
        let earlier = previous?.entry(for: source)
        let kept = keptEntries(of: report, earlier: earlier)
        guard !report.written.isEmpty || !kept.isEmpty else { return nil }
        let earlierSize = earlier.map { ImageSize(width: $0.width, height: $0.height) }
        // Nothing written: the entry is the earlier one, of the input as it was then.
        let size = report.written.isEmpty ? earlierSize : report.originalSize ?? earlierSize ?? headerSize(report.input)
        guard let size else { return nil }
        var outputs = kept
        // Grouped once, so an input with many outputs costs time in proportion to them.
        let writtenByOutput = Dictionary(grouping: report.written, by: \.output)
        // An output with widths and formats is several definitions of one name: one entry, its
        // files by format in the order the output lists its formats.
        var seen: Set<String> = []
        for output in definition.outputs where seen.insert(output.name).inserted {
            guard let written = writtenByOutput[output.name] else { continue }
            if let tiles = output.tiles, let pyramid = written.first {
                outputs[output.name] = ImageManifest.Output(formats: [], placeholders: nil, tiles: entry(for: pyramid, tiles))
                continue
            }
            let formatOrder = formatOrders[output.name] ?? []
            let own = written.filter { $0.art == nil }
            let formats = manifestFormats(own, order: formatOrder, output: output)
            let art = output.art.enumerated().compactMap { index, entry -> ImageManifest.Art? in
                let formats = manifestFormats(written.filter { $0.art == index }, order: formatOrder, output: output)
                return formats.isEmpty
                    ? nil : ImageManifest.Art(media: entry.media, aspectRatio: entry.aspectRatio, sizes: entry.sizes, formats: formats)
            }
            let (placeholders, placeholdersFrom) = placeholders(
                of: output, own: own, allUpToDate: written.allSatisfy(\.upToDate), before: earlier?.outputs[output.name], source: source)
            var entry = ImageManifest.Output(formats: formats, placeholders: placeholders, placeholdersFrom: placeholdersFrom)
            entry.art = art.isEmpty ? nil : art
            let failed = report.failures.filter { $0.output == output.name }.map { $0.file ?? output.name }
            entry.failed = failed.isEmpty ? nil : failed
            outputs[output.name] = entry
        }
        return ImageManifest.Input(source: source, width: size.width, height: size.height, outputs: outputs)
    }

    /// The run's warnings from making entries: the outputs left without the placeholders they
    /// declare, because none of their files could be read back; files whose URLs climb out of
    /// the folder `urlPrefix` serves.
    var warnings: [String] {
        let (urlRoot, prefix) = (settings.urlRoot.path, settings.urlPrefix)
        return state.withLock { state in
            let unnamed = state.missingPlaceholderCount - state.missingPlaceholders.count
            let outside = state.urlsOutsideRoot.map { path in
                "the manifest's URLs of files outside \(urlRoot), the folder urlPrefix \"\(prefix)\" serves, climb out of it "
                    + "(\(path)): write them under it, or set manifest.urlRoot to the folder \"\(prefix)\" serves if it is another"
            }
            return state.missingPlaceholders
                + (unnamed > 0 ? ["the manifest has no placeholders for \(unnamed) more outputs, whose files could not be read"] : [])
                + (outside.map { [$0] } ?? [])
        }
    }

    /// The files of `written` by format, in `order`, leaving out formats with none.
    private func manifestFormats(
        _ written: [WrittenOutput], order: [EncoderSettings.Format], output: OutputDefinition
    ) -> [ImageManifest.Format] {
        order.compactMap { format -> ImageManifest.Format? in
            let files = written.filter { ($0.format ?? output.encoder.format) == format }.map { file in
                let (path, url) = place(of: file.path)
                return ImageManifest.File(
                    url: url, path: path, width: file.size.width,
                    height: file.size.height,
                    bytes: file.byteCount, format: format.rawValue, mimeType: format.mimeType,
                    quality: file.searchedQuality?.quality, ssimulacra2: file.searchedQuality?.score)
            }
            return files.isEmpty ? nil : ImageManifest.Format(format: format.rawValue, mimeType: format.mimeType, files: files)
        }
    }

    /// The manifest's entry for the tile pyramid `written`.
    private func entry(for written: WrittenOutput, _ tiles: TileSettings) -> ImageManifest.Tiles {
        let (path, url) = place(of: written.path)
        return ImageManifest.Tiles(
            layout: tiles.layout.rawValue, url: url, path: path,
            width: written.size.width, height: written.size.height, tileSize: tiles.size, overlap: tiles.overlap,
            format: tiles.format.rawValue, mimeType: tiles.format.format.mimeType, bytes: written.byteCount)
    }

    /// The input's upright size from its header, when the run did not decode it (all up to date).
    private func headerSize(_ input: InputFile) -> ImageSize? {
        guard !input.isRemote, let image = try? VipsImage.open(file: input.path) else { return nil }
        let size = image.orientedSize
        return ImageSize(width: size.width, height: size.height)
    }

    /// How the manifest names the file at `path`: relative to the manifest's folder, and
    /// `urlPrefix` followed by its path relative to `urlRoot`; or, for an output in a bucket,
    /// its address (`s3://…`), and `urlPrefix` followed by its key, which a CDN or the bucket's
    /// website serves it by.
    private func place(of path: String) -> (path: String, url: String) {
        if let object = ObjectLocation(path) {
            return (object.description, ImageManifest.File.url(prefix: settings.urlPrefix, path: object.key))
        }
        let served = Self.relativePath(path, to: urlRoot)
        // Above the folder the prefix serves: a browser takes `/img/../x` for `/x`, not this file.
        if served.hasPrefix("../"), !settings.urlPrefix.isEmpty {
            state.withLock { $0.urlsOutsideRoot = $0.urlsOutsideRoot ?? path }
        }
        return (
            Self.relativePath(path, to: manifestFolder),
            ImageManifest.File.url(prefix: settings.urlPrefix, path: served)
        )
    }

    /// `path` relative to the folder of path components `base`, with `..` where it lies outside.
    static func relativePath(_ path: String, to base: [String]) -> String {
        let target = URL(fileURLWithPath: path).standardizedFileURL.pathComponents
        var common = 0
        while common < base.count, common < target.count, base[common] == target[common] { common += 1 }
        return (Array(repeating: "..", count: base.count - common) + target[common...]).joined(separator: "/")
    }
}
