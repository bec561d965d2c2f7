import Foundation
import Vips

/// One run of a plan: drives every source through the stage queues with a bounded number in
/// flight, and reports each listing of it as it completes.
final class RunExecution: Sendable {
    private let plan: RunPlan
    private let emit: @Sendable (PipelineEvent) -> Void
    private let fetchQueue: StageQueue
    private let cacheQueue: StageQueue
    private let decompressQueue: StageQueue
    private let resizeQueue: StageQueue
    private let encodeQueue: StageQueue
    private let fileFetcher: FileFetcher
    private let remoteFetcher: RemoteFetcher
    private let cache: (any DataCaching)?
    private let decoder: ImageDecoder
    /// The record of outputs made, for incremental runs; nil when the file disables them.
    private let journal: OutputJournal?
    /// Make every output again, whatever the journal says.
    private let force: Bool
    /// Paths written in this run: the one piece of shared runner state, so it has one owner.
    private let claimedPaths = Locked<[String: String]>([:])
    /// Images steps need beside their input (overlays), loaded once before the first input,
    /// with the version of each for the journal's fingerprints.
    private let resources = Locked<(images: [URL: Result<VipsImage, ResourceError>], versions: [URL: String])>(([:], [:]))

    init(plan: RunPlan, dataLoader: any DataLoading, cache: (any DataCaching)?, journal: OutputJournal?, force: Bool,
         emit: @escaping @Sendable (PipelineEvent) -> Void) {
        let definition = plan.definition
        self.plan = plan
        self.journal = journal
        self.force = force
        self.emit = emit
        self.cache = cache
        let clock = RunClock()
        let record: @Sendable (StageOperation) -> Void = { emit(.stageFinished($0)) }
        fetchQueue = StageQueue(stage: .fetch, concurrency: definition.fetch.concurrency, clock: clock, record: record)
        cacheQueue = StageQueue(stage: .cache, concurrency: definition.cache.concurrency, clock: clock, record: record)
        decompressQueue = StageQueue(stage: .decompress, concurrency: definition.decompress.concurrency, clock: clock, record: record)
        resizeQueue = StageQueue(stage: .resize, concurrency: definition.resize.concurrency, clock: clock, record: record)
        encodeQueue = StageQueue(stage: .encode, concurrency: definition.encode.concurrency, clock: clock, record: record)
        fileFetcher = FileFetcher(maxBytes: definition.fetch.maxBytes)
        remoteFetcher = RemoteFetcher(loader: dataLoader, settings: definition.fetch)
        decoder = ImageDecoder(settings: definition.decompress, outputs: definition.outputs)
    }

    /// Each stage's queued, running and done counts now.
    var stageCounts: [Stage: StageCounts] {
        Dictionary(uniqueKeysWithValues: [fetchQueue, cacheQueue, decompressQueue, resizeQueue, encodeQueue].map { ($0.stage, $0.counts) })
    }

    func run() async {
        let clock = ContinuousClock()
        let start = clock.now
        let items = Self.largestFirst(plan.items)
        let inputCount = plan.inputCount
        emit(.started(inputs: inputCount, outputsPerInput: plan.definition.outputs.count, warnings: plan.warnings))
        if ProcessInfo.processInfo.environment["VIPS_CONCURRENCY"] == nil {
            // Several images are in flight on the stage queues; one libvips thread each keeps
            // the cores busy without oversubscribing them (measured: see the README).
            Vips.setThreadsPerImage(1)
        }

        await loadResources()

        var succeeded = 0, failed = 0, written = 0, upToDate = 0, inFlight = 0, peakInFlight = 0
        await withTaskGroup(of: [ItemReport]?.self) { group in
            var next = 0
            // Backpressure: at most `inFlight` sources between fetch and write, their fetched
            // bytes included. A new one starts only when one finishes, so memory does not grow
            // with the number of inputs, and a fast fetch stage waits for a slow encoder.
            func startNext() {
                guard next < items.count else { return }
                let item = items[next]
                next += 1
                inFlight += 1
                peakInFlight = max(peakInFlight, inFlight)
                group.addTask { await self.process(item) }
            }
            for _ in 0..<plan.definition.inFlight { startNext() }
            while let reports = await group.next() {
                inFlight -= 1
                for report in reports ?? [] {
                    if report.succeeded { succeeded += 1 } else { failed += 1 }
                    written += report.written.filter { !$0.upToDate }.count
                    upToDate += report.written.filter(\.upToDate).count
                    emit(.itemCompleted(report))
                }
                if !Task.isCancelled { startNext() }
            }
        }
        journal?.finish()
        let cancelled = Task.isCancelled
        emit(.finished(RunSummary(
            inputs: inputCount, succeeded: succeeded, failed: failed,
            notRun: inputCount - succeeded - failed, outputsWritten: written, outputsUpToDate: upToDate,
            elapsed: clock.now - start, cancelled: cancelled, peakInFlight: peakInFlight)))
    }

    /// Fetches and decodes every image the steps name as a resource, once for the whole run,
    /// through the same fetch, cache and decompress stages as inputs (full size: a step may
    /// scale it). A resource that fails fails the outputs whose steps use it, item by item.
    private func loadResources() async {
        let urls = Set(plan.definition.outputs.flatMap { $0.steps.flatMap(\.resources) })
        guard !urls.isEmpty else { return }
        let decoder = ImageDecoder(settings: plan.definition.decompress, outputs: [])
        for url in urls.sorted(by: { $0.absoluteString < $1.absoluteString }) {
            let input = url.isFileURL
                ? InputFile(path: url.path, displayName: url.path, subfolder: "")
                : InputFile(url: url.absoluteString)
            let result: Result<VipsImage, ResourceError>
            var version: String?
            do {
                let fetched = try await obtain(input)
                version = fetched.version
                let decoded = try await decompressQueue.run(for: input.displayName) { try decoder.decode(fetched.source) }
                result = .success(decoded.image)
            } catch {
                let reason = (error as? ItemError)?.reason ?? String(describing: error)
                result = .failure(ResourceError(url: url, reason: reason))
            }
            resources.withLock {
                $0.images[url] = result
                $0.versions[url] = version ?? "unversioned"
            }
        }
    }

    /// What identifies the versions of the resources `output`'s steps use, for its fingerprint.
    private func resourceVersions(of output: OutputDefinition) -> String {
        let urls = output.steps.flatMap(\.resources)
        guard !urls.isEmpty else { return "" }
        let versions = resources.withLock { $0.versions }
        return "\n" + urls.map { "\($0.absoluteString)=\(versions[$0] ?? "?")" }.joined(separator: ";")
    }

    /// The inputs in the order to start them: largest file first, so that a big image does not
    /// start last and leave a core idle at the end of the run (longest job first; measured:
    /// 4.6 s → 4.3 s on the benchmark). Sizes come from planning; a missing file sorts last.
    static func largestFirst(_ items: [RunPlan.Item]) -> [RunPlan.Item] {
        items.enumerated()
            .sorted { ($0.element.input.byteCount ?? -1, -$0.offset) > ($1.element.input.byteCount ?? -1, -$1.offset) }
            .map(\.element)
    }

    /// One source through every stage, fanned out to every output of every listing; one report
    /// per listing. Nil when the run was cancelled before it finished.
    private func process(_ item: RunPlan.Item) async -> [ItemReport]? {
        let refused = item.listings.filter { $0.refusal != nil }.map { listing in
            ItemReport(input: listing.input, written: [],
                       failures: [ItemFailure(input: listing.input.displayName, output: nil,
                                              error: ItemError(stage: .fetch, reason: listing.refusal ?? "refused"))],
                       originalSize: nil)
        }
        let listings = item.listings.filter { $0.refusal == nil && $0.sameAs == nil }
        guard !listings.isEmpty else { return refused }
        // A repeated listing gets its twin's report, under its own name.
        let repeats = item.listings.filter { $0.sameAs != nil }
        func withRepeats(_ reports: [ItemReport]) -> [ItemReport] {
            reports + repeats.compactMap { listing in
                guard let twin = listing.sameAs, let original = reports.first(where: { $0.input == item.listings[twin].input }) else { return nil }
                return ItemReport(input: listing.input, written: original.written, failures: original.failures, originalSize: original.originalSize)
            }
        }

        for listing in item.listings { emit(.itemStarted(listing.input)) }
        let name = item.input.displayName
        let outputs = plan.definition.outputs
        let fetched: FetchedSource
        do {
            fetched = try await obtain(item.input)
        } catch is CancellationError {
            return nil
        } catch {
            return refused + withRepeats(failed(listings, Self.itemError(error, stage: .fetch)))
        }

        // Incremental runs: outputs already made from this version of the input, with the same
        // settings, and still in place, are not made again.
        var fingerprints: [Int: String] = [:]
        var upToDate: [Int: [Int: WrittenOutput]] = [:]
        if let version = fetched.version, let journal {
            for (outputIndex, output) in outputs.enumerated() {
                fingerprints[outputIndex] = journal.fingerprint(version: version + resourceVersions(of: output), output: outputIndex)
            }
            for (listingIndex, listing) in listings.enumerated() where !force {
                for (outputIndex, target) in listing.targets.enumerated() {
                    guard let fingerprint = fingerprints[outputIndex],
                          let record = journal.upToDate(target.plannedPath, fingerprint: fingerprint) else { continue }
                    upToDate[listingIndex, default: [:]][outputIndex] = WrittenOutput(
                        output: outputs[outputIndex].name, path: record.path, size: ImageSize(width: record.width, height: record.height),
                        byteCount: Int(record.size), upToDate: true)
                }
            }
        }
        let outputCount = outputs.count
        if listings.indices.allSatisfy({ upToDate[$0]?.count == outputCount }) {
            return refused + withRepeats(listings.enumerated().map { index, listing in
                ItemReport(input: listing.input, written: outputs.indices.compactMap { upToDate[index]?[$0] }, failures: [], originalSize: nil)
            })
        }

        let decoded: DecodedImage
        do {
            let source = fetched.source
            decoded = try await decompressQueue.run(for: name) { [decoder] in try decoder.decode(source) }
        } catch is CancellationError {
            return nil
        } catch {
            return refused + withRepeats(failed(listings, Self.itemError(error, stage: .decompress)))
        }

        // Fan-out: every output of every listing starts from the one decoded image.
        let outcomes = await withTaskGroup(of: (Int, Int, Result<WrittenOutput, ItemError>?).self) { group in
            for (listingIndex, listing) in listings.enumerated() {
                for (outputIndex, output) in outputs.enumerated() {
                    if let done = upToDate[listingIndex]?[outputIndex] {
                        group.addTask { (listingIndex, outputIndex, .success(done)) }
                        continue
                    }
                    let target = listing.targets[outputIndex]
                    let fingerprint = fingerprints[outputIndex]
                    group.addTask {
                        (listingIndex, outputIndex, await self.make(output, target: target, from: decoded, input: listing.input, fingerprint: fingerprint))
                    }
                }
            }
            var results: [(Int, Int, Result<WrittenOutput, ItemError>?)] = []
            for await result in group { results.append(result) }
            return results.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        }
        if outcomes.contains(where: { $0.2 == nil }) { return nil }
        return refused + withRepeats(listings.enumerated().map { listingIndex, listing in
            var written: [WrittenOutput] = []
            var failures: [ItemFailure] = []
            for (index, outputIndex, outcome) in outcomes where index == listingIndex {
                switch outcome {
                case .success(let output)?: written.append(output)
                case .failure(let error)?:
                    failures.append(ItemFailure(input: listing.input.displayName, output: outputs[outputIndex].name, error: error))
                case nil: break
                }
            }
            return ItemReport(input: listing.input, written: written, failures: failures, originalSize: decoded.originalSize)
        })
    }

    /// Reports of listings that failed as a whole.
    private func failed(_ listings: [RunPlan.Listing], _ error: ItemError) -> [ItemReport] {
        listings.map { listing in
            ItemReport(input: listing.input, written: [],
                       failures: [ItemFailure(input: listing.input.displayName, output: nil, error: error)], originalSize: nil)
        }
    }

    /// The fetch and cache stages: a local file is checked where it lies; a URL comes from the
    /// cache when fresh, else from the network (conditionally when cached), and goes back into
    /// the cache unless the server forbids it.
    private func obtain(_ input: InputFile) async throws -> FetchedSource {
        guard let url = input.url else {
            return try await fetchQueue.run(for: input.displayName) { [fileFetcher] in try fileFetcher.fetch(input) }
        }
        func version(_ etag: String?, _ lastModified: String?) -> String? {
            etag.map { "etag:\(url) \($0)" } ?? lastModified.map { "modified:\(url) \($0)" }
        }
        let cache = self.cache
        let cached = try await cacheQueue.run(for: url) { cache?.cachedResponse(for: url) }
        if let cached, cached.isFresh() {
            return FetchedSource(source: .data(cached.body), version: version(cached.etag, cached.lastModified))
        }
        let outcome = try await fetchQueue.run(for: url) { [remoteFetcher] isCancelled in
            try remoteFetcher.fetch(url, revalidating: cached, isCancelled: isCancelled)
        }
        switch outcome {
        case .notModified(let response):
            guard var refreshed = cached else { throw ItemError(stage: .fetch, reason: "HTTP 304 without a cached copy") }
            let control = CacheControl(response.headers["cache-control"])
            refreshed.storedAt = Date()
            refreshed.maxAge = control.freshness ?? refreshed.maxAge
            refreshed.etag = response.etag ?? refreshed.etag
            refreshed.lastModified = response.lastModified ?? refreshed.lastModified
            if !control.noStore, let cache {
                try await cacheQueue.run(for: url) { [refreshed] in cache.store(refreshed) }
            }
            return FetchedSource(source: .data(refreshed.body), version: version(refreshed.etag, refreshed.lastModified))
        case .fetched(let response):
            let control = CacheControl(response.headers["cache-control"])
            if !control.noStore, let cache, response.etag != nil || response.lastModified != nil || control.freshness != nil {
                let entry = CachedResponse(url: url, body: response.body, etag: response.etag,
                                           lastModified: response.lastModified, storedAt: Date(), maxAge: control.freshness)
                try await cacheQueue.run(for: url) { cache.store(entry) }
            }
            return FetchedSource(source: .data(response.body), version: version(response.etag, response.lastModified))
        }
    }

    /// One output of one listing: its processor steps, then encoding and writing.
    /// Nil when cancelled while queued.
    private func make(_ output: OutputDefinition, target: OutputTarget, from decoded: DecodedImage, input: InputFile, fingerprint: String?) async -> Result<WrittenOutput, ItemError>? {
        do {
            let context = ProcessingContext(input: input.displayName, output: output.name, originalSize: decoded.originalSize,
                                            maxPixels: plan.definition.decompress.maxPixels,
                                            resources: resources.withLock { $0.images })
            let processed = try await resizeQueue.run(for: input.displayName, output: output.name) {
                guard decoded.frameCount > 1 else {
                    return try Self.applySteps(output.steps, to: decoded.image, context: context)
                }
                return try Self.applySteps(output.steps, toFramesOf: decoded.image, keepingAll: output.encoder.format == .webp, context: context)
            }
            let encoded = try await encodeQueue.run(for: input.displayName, output: output.name) { [self] in
                try encodeAndWrite(processed, output: output, target: target, input: input)
            }
            if let fingerprint, let journal {
                journal.recordWritten(encoded.path, planned: target.plannedPath, fingerprint: fingerprint, size: encoded.size)
            }
            return .success(encoded)
        } catch is CancellationError {
            return nil
        } catch {
            return .failure(Self.itemError(error, stage: .resize))
        }
    }

    private static func applySteps(_ steps: [any ImageProcessing], to image: VipsImage, context: ProcessingContext) throws(ItemError) -> VipsImage {
        var image = image
        for (index, step) in steps.enumerated() {
            do {
                image = try step.process(image, context: context)
            } catch {
                throw ItemError(stage: .resize, reason: ImageDecoder.describe(error), step: .init(index: index, name: type(of: step).name))
            }
            // A step may grow the image (extend, rotate, vips): the header says by how much
            // before any pixel is computed, so refuse what decoding would have refused.
            if image.size.pixelCount > context.maxPixels {
                throw ItemError(stage: .resize, reason: "the result would be \(image.size), "
                                + "more than the \(context.maxPixels) pixels decompress.maxPixels allows",
                                step: .init(index: index, name: type(of: step).name))
            }
        }
        do {
            // Compute the pixels here, in the resize queue, not lazily in the encoder's.
            return try image.rendered()
        } catch {
            throw ItemError(stage: .resize, reason: ImageDecoder.describe(error))
        }
    }

    /// An animation's steps run frame by frame, so a crop crops each frame; only WebP outputs
    /// keep every frame (an animated WebP), the others are made from the first.
    private static func applySteps(_ steps: [any ImageProcessing], toFramesOf image: VipsImage, keepingAll: Bool,
                                   context: ProcessingContext) throws(ItemError) -> VipsImage {
        do {
            var frames = try image.pages()
            if !keepingAll { frames = Array(frames.prefix(1)) }
            var processed: [VipsImage] = []
            for frame in frames {
                processed.append(try applySteps(steps, to: frame, context: context))
            }
            guard Set(processed.map(\.size)).count == 1 else {
                throw ItemError(stage: .resize, reason: "the steps made frames of different sizes")
            }
            return try VipsImage.joiningPages(processed).rendered()
        } catch let error as ItemError {
            throw error
        } catch {
            throw ItemError(stage: .resize, reason: ImageDecoder.describe(error))
        }
    }

    private func encodeAndWrite(_ image: VipsImage, output: OutputDefinition, target: OutputTarget, input: InputFile) throws(ItemError) -> WrittenOutput {
        let path: String
        do {
            path = try target.path(width: image.width, height: image.height)
        } catch {
            throw ItemError(stage: .encode, reason: error.message)
        }
        let claimant = "output \"\(output.name)\" of \(input.displayName)"
        let earlier = claimedPaths.withLock { claimed -> String? in
            if let earlier = claimed[path] { return earlier }
            claimed[path] = claimant
            return nil
        }
        if let earlier {
            throw ItemError(stage: .encode, reason: "\(path) was already written in this run by \(earlier)")
        }
        let byteCount = try ImageWriter.write(to: path, root: target.root) { descriptor throws(ItemError) in
            do {
                try ImageEncoder.encode(image, with: output.encoder, into: descriptor)
            } catch {
                throw ItemError(stage: .encode, reason: ImageDecoder.describe(error))
            }
        }
        return WrittenOutput(output: output.name, path: path, size: image.size, byteCount: byteCount)
    }

    private static func itemError(_ error: any Error, stage: Stage) -> ItemError {
        (error as? ItemError) ?? ItemError(stage: stage, reason: String(describing: error))
    }
}
