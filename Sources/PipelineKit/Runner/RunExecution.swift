import Foundation
import Vips

/// One run of a plan: drives every source through the stages with a bounded number in flight,
/// and reports each listing of it as it completes.
///
/// A source's journey, one type per stage: `SourceLoader` (fetch, cache) → the journal
/// (`IncrementalRuns`) → `ImageDecoder` (decompress) → for every output, `StepChain` (process,
/// the output's steps) → `OutputWriter` (encode and write).
final class RunExecution: Sendable {
    let plan: RunPlan
    private let emit: @Sendable (PipelineEvent) -> Void
    let queues: StageQueues
    let sources: SourceLoader
    let decoder: ImageDecoder
    private let writer: OutputWriter
    /// Flushes and renames written files off the encode lanes.
    private let committer: FileCommitter
    /// The record of outputs made, for incremental runs; nil when the file disables them.
    let journal: OutputJournal?
    private let force: Bool
    /// The run's memory budget and every allowance within it: its own, or shared with runs
    /// going at the same time (`SharedMemoryBudget`).
    let memory: MemoryAccountant
    /// Makes each source's manifest entry when it completes; nil when the file asks for none.
    let manifest: ManifestWriter?
    /// The files of sources a cancel left part-made, by the listing's display name: they have
    /// no report, but they are on disk and in the journal, so the summary counts and lists them.
    private let partlyMade = Locked<[DiskPath: [WrittenOutput]]>([:])
    /// Each width's set, for the fan-out's choice of which width makes a trimmed file.
    private let setOfEachWidth: [Int: [Int]]
    /// Every input's clock lies within this one, which has no limit: `stopWork()` expires it,
    /// and the libvips work on the lanes stops as when an input's time runs out.
    private let work = VipsDeadline(seconds: 0)

    init(
        plan: RunPlan, dataLoader: any DataLoading, cache: (any DataCaching)?, journal: OutputJournal?, force: Bool,
        memory: MemoryAccountant, stages: SharedStages? = nil, manifest: ManifestWriter?,
        emit: @escaping @Sendable (PipelineEvent) -> Void
    ) {
        let definition = plan.definition
        self.plan = plan
        self.memory = memory
        self.journal = journal
        self.force = force
        self.manifest = manifest
        self.emit = emit
        queues = stages?.queues ?? StageQueues(definition) { emit(.stageFinished($0)) }
        committer = stages?.committer ?? FileCommitter()
        sources = SourceLoader(definition, queues: queues, dataLoader: dataLoader, cache: cache, stores: plan.stores)
        writer = OutputWriter(
            stores: plan.stores, protecting: plan.protectedInputs, claimingPaths: plan.somePathsWaitForSizes,
            sizedPathReach: plan.sizedPathReach)
        decoder = ImageDecoder(
            settings: definition.decompress, outputs: definition.outputs, accountant: memory, encodeLanes: definition.encode.concurrency)
        setOfEachWidth = definition.setOfEachWidth
    }

    /// Stops the libvips work on the lanes (decodes, steps and the renders encoders read) where
    /// libvips next looks, as an input's time limit would, where a plain cancel lets it finish.
    /// What it stops is reported as not run, not failed.
    func stopWork() {
        work.expireNow()
    }

    /// `error` as an item's failure in `stage`, or `CancellationError` when the run stopped its
    /// work (`stopWork()`): then whatever libvips said, the stop is the reason.
    func failure(_ error: any Error, stage: Stage) throws(CancellationError) -> ItemError {
        if work.hasExpired { throw CancellationError() }
        return try ItemError.wrapping(error, stage: stage)
    }

    /// The clock of `input` from now, `limits.itemTimeout` long, within the run's own.
    func startClock(of input: String) -> ItemDeadline {
        ItemDeadline(seconds: plan.definition.limits.itemTimeout, input: input, within: work)
    }

    /// Each stage's queued, running and done counts now.
    var stageCounts: [Stage: StageCounts] { queues.counts }

    func run() async {
        let start = ContinuousClock.now
        let definition = plan.definition
        emit(.started(inputs: plan.inputCount, outputsPerInput: definition.outputs.count, warnings: plan.warnings))
        let resources = await RunResources.load(
            for: definition.outputs, sources: sources, decompress: queues.decompress,
            settings: definition.decompress, redaction: definition.fetch.redaction, memory: memory)
        let incremental = IncrementalRuns(
            definition: definition, journal: journal, force: force, resources: resources,
            stores: plan.stores, headQueue: queues.fetch)
        var totals = RunTotals()
        var lastRelease = ContinuousClock.now
        let wanted = definition.inFlight(fetchingRemoteInputs: plan.items.containsRemote)
        let window = InFlightWindow(width: OpenFileLimit.inFlight(fitting: wanted) ?? 1, asideLimit: MemoryAccountant.asideLimit)
        let planned = plan.items
        let order = Self.largestFirst(
            planned.refs.map { $0.byteCount < 0 ? nil : $0.byteCount }, inRoundsOf: window.width + window.asideLimit)
        // Which sources ended with reports: the others a cancel left not run.
        var finished = [Bool](repeating: false, count: planned.count)
        let peak = await window.run(order, allStarted: memory.runStartedEveryInput) { position, slot in
            // Read back from the plan's file as the window takes it: the run holds no source ahead.
            (position, await self.process(planned[position], slot: slot, incremental: incremental))
        } completed: { position, reports in
            guard let reports else { return }
            finished[position] = true
            totals.count(reports)
            for report in reports { emit(.itemCompleted(report)) }
            // Between inputs, at most every quarter second: free holes left in the allocator's
            // arenas go back to the system, so memory late in a long run is what it was early.
            if lastRelease.duration(to: .now) >= .milliseconds(250) {
                Vips.releaseFreeMemory()
                lastRelease = .now
            }
        }
        resources.release(from: memory)
        let partlyMade = self.partlyMade.withLock { $0 }
        totals.count(files: partlyMade.values.flatMap { $0 })
        let cancelled = Task.isCancelled
        // Flushing the journal and writing the manifest block on the disk, for seconds on a
        // large manifest: off the cooperative pool, whose few threads a server's other requests
        // need meanwhile. A cancelled run writes the entries of what it finished and keeps the
        // others as they were, so the manifest stays true to the files on disk.
        let journal = self.journal
        let reads = plan.protectedInputs
        // Only a run that made or found every output of its inputs knows which of their `{hash}`
        // files are old: a part of a plan (a server's request) knows it of the files it made.
        let whole = !cancelled && plan.shard == nil && totals.failed == 0 && totals.succeeded == plan.inputCount
        let journalWarnings = await runBlocking(on: .global(qos: .utility)) {
            (whole ? journal?.removeReplacedHashedFiles(keeping: reads) ?? [] : []) + (journal?.finish() ?? [])
        }
        let manifestProblem = cancelled ? await manifest?.writeCutShort() : await manifest?.write()
        var summary = totals.summary(inputs: plan.inputCount, elapsed: .now - start, cancelled: cancelled, peakInFlight: peak)
        summary.warnings = journalWarnings + [sources.cache?.writeProblem].compactMap { $0 } + (manifest?.warnings ?? [])
        summary.manifestProblem = manifestProblem
        summary.batch = plan.batch
        if let budget = memory.budget, let admission = memory.admission {
            summary.memory = RunSummary.Memory(budget: budget, peakAdmittedBytes: admission.peakAdmitted)
        }
        summary.inputsServedStale = sources.servedStale.withLock { $0 }
        summary.inputsNotRun = finished.indices.filter { !finished[$0] }.flatMap { position in
            planned[position].listings.map { listing in
                RunSummary.NotRunInput(input: listing.input.displayName, written: partlyMade[DiskPath(listing.input.displayName)] ?? [])
            }
        }
        // The manifest is written before `finished` reaches anyone, so it is there when they see it.
        emit(.finished(summary))
    }

    /// The positions of the inputs, whose file sizes are `sizes`, in the order to start them:
    /// largest file first, so that a big image does not start last and leave a core idle at the
    /// end of the run (longest job first; Benchmarks/RESULTS.md has the gain), dealt in rounds of
    /// `round` inputs so that the big ones do not all start together.
    ///
    /// The inputs of known size, largest first, are cut into at most `round` bands of consecutive
    /// sizes; each round takes the next input of every band, largest band first. A round is what
    /// the window looks at at once (those working and those waiting aside), so that it holds a
    /// few large inputs among smaller ones however many inputs the run has: sorted plainly, many
    /// copies of one large photograph, or many photographs of one size, fill the window together,
    /// and their decodes meet (those that cannot stream go over their allowance when too many
    /// wait for it). The largest input still starts first, each round ends with its smallest, and
    /// the run with the smallest of all. Sizes come from planning; inputs of unknown size (remote
    /// ones, a missing file) follow in listing order.
    static func largestFirst(_ sizes: [Int64?], inRoundsOf round: Int) -> [Int] {
        let sorted = sizes.indices.sorted { (sizes[$0] ?? -1, -$0) > (sizes[$1] ?? -1, -$1) }
        let known = sorted.prefix { sizes[$0] != nil }
        // With no more inputs than one round, each band is one input: plain largest first.
        let bandSize = (known.count + max(1, round) - 1) / max(1, round)
        guard bandSize > 1 else { return sorted }
        var order: [Int] = []
        order.reserveCapacity(sorted.count)
        for place in 0..<bandSize {
            for bandStart in stride(from: known.startIndex, to: known.endIndex, by: bandSize)
            where bandStart + place < known.endIndex {
                order.append(known[bandStart + place])
            }
        }
        return order + sorted[known.endIndex...]
    }

    /// One source, for every listing of it: one report per listing; nil when cancelled.
    private func process(_ item: RunPlan.Item, slot: InFlightWindow.Slot, incremental: IncrementalRuns) async -> [ItemReport]? {
        // Taken by the window as the run was cancelled: not started, as nothing is after it.
        guard !Task.isCancelled else { return nil }
        for listing in item.listings { emit(.itemStarted(listing.input)) }
        let listings = item.listingsToMake
        guard !listings.isEmpty else { return item.reportForEveryListing(from: []) }
        do {
            let reports = item.reportForEveryListing(
                from: try await journey(of: item.input, for: listings, slot: slot, incremental: incremental))
            // The entry's placeholders are small images read from the outputs written and encoded
            // again: encode work, on its lane per core. Made even once the run is cancelled (off
            // the lanes, which then start nothing): the manifest of a run cut short has it.
            if let manifest {
                do {
                    try await queues.encode.run(for: item.input.displayName) { manifest.add(reports) }
                } catch {
                    await runBlocking(on: .global(qos: .utility)) { manifest.add(reports) }
                }
            }
            return reports
        } catch {
            return nil
        }
    }

    /// Every output of every listing from the one decoded image, side by side: the jobs that
    /// made a file of their own, and their results. A job whose file turned out to be another
    /// job's (`sized` holds the jobs it may be) is left out, and recorded as that one's.
    func fanOut(
        _ jobs: [OutputJob], from decoded: DecodedImage, deadline: ItemDeadline, incremental: IncrementalRuns, sized: [OutputJob]
    ) async throws(CancellationError) -> (jobs: [OutputJob], results: [Result<WrittenOutput, ItemError>]) {
        let chosen = NeighbourQualities()
        let planned = OutputWriter.InputPaths(jobs.map { ($0.target, $0.output) })
        let makers = Makers(beside: Set(jobs.map { [$0.listing, $0.outputIndex] }), sized: sized, sets: setOfEachWidth)
        let outcomes = await withTaskGroup(of: (Int, JobOutcome?).self) { group in
            for (index, job) in jobs.enumerated() {
                group.addTask {
                    let outcome = try? await self.make(
                        job, from: decoded, deadline: deadline, incremental: incremental, chosen: chosen, planned: planned,
                        makers: makers)
                    return (index, outcome)
                }
            }
            var outcomes = [JobOutcome?](repeating: nil, count: jobs.count)
            for await (index, outcome) in group { outcomes[index] = outcome }
            return outcomes
        }
        let results = outcomes.map { outcome -> Result<WrittenOutput, ItemError>? in
            if case .finished(let result)? = outcome { return result }
            return nil
        }
        guard !outcomes.contains(where: { $0 == nil }) else {
            // Cut short with some of its files made anew: the manifest's old entry no longer
            // describes them all, and this run makes no new one.
            for (job, result) in zip(jobs, results) {
                if case .success(let written)? = result, !written.upToDate { manifest?.cutShort(job.input.displayName) }
            }
            partlyMade.withLock { partlyMade in
                for (job, result) in zip(jobs, results) {
                    if case .success(let written)? = result { partlyMade[DiskPath(job.input.displayName), default: []].append(written) }
                }
            }
            throw CancellationError()
        }
        var made: (jobs: [OutputJob], results: [Result<WrittenOutput, ItemError>]) = ([], [])
        var makingOriginal: Set<[Int]> = []
        for (job, outcome) in zip(jobs, outcomes) {
            switch outcome {
            case .finished(let result)?:
                made.jobs.append(job)
                made.results.append(result)
            case .madeBy(let maker)?:
                // Found up to date by its own planned path next time, without a decode.
                let makers = zip(jobs, results).first { $0.0.listing == job.listing && $0.0.outputIndex == maker }
                if case .success(let written)? = makers?.1 {
                    incremental.recordWritten(written, for: job, sourceSize: decoded.originalSize)
                }
                if job.output.variant?.width == nil { makingOriginal.insert([job.listing, maker]) }
            case nil:
                break
            }
        }
        for (index, job) in made.jobs.enumerated() where makingOriginal.contains([job.listing, job.outputIndex]) {
            if case .success(var written) = made.results[index] {
                written.isOriginal = true
                made.results[index] = .success(written)
            }
        }
        return made
    }

    /// One output: its steps, then encoding and writing, within the input's `deadline`: a
    /// stage that would start after it does not, and a file encoded after it is not committed.
    private func make(
        _ job: OutputJob, from decoded: DecodedImage, deadline: ItemDeadline, incremental: IncrementalRuns,
        chosen: NeighbourQualities, planned: OutputWriter.InputPaths, makers: Makers
    ) async throws(CancellationError) -> JobOutcome {
        if let done = job.upToDate { return .finished(.success(done)) }
        var job = job
        let name = job.input.displayName
        let output = job.output.name
        var stage = Stage.process
        do {
            let notes = ProcessingNotes()
            let context = ProcessingContext(
                input: name, output: job.output.name, originalSize: decoded.originalSize,
                maxPixels: plan.definition.decompress.maxPixels,
                resources: incremental.resources.images, focusPoint: plan.definition.focusPoints?.point(for: job.input), notes: notes,
                shouldStop: { [work] in deadline.hasRunOut || work.hasExpired })
            let chain = StepChain(job.output)
            let processed = try await queues.process.run(for: name, output: output, notes: notes) { [job] in
                try deadline.check(.process, output: output)
                return try chain.apply(to: decoded, outputIndex: job.outputIndex, context: context, under: deadline.vips)
            }
            let image = processed.image
            switch makers.maker(of: job, atResize: processed.atResize, in: plan.definition) {
            case .itself: break
            case .beside(let maker): return .madeBy(outputIndex: maker)
            case .leftOut(let maker): job = maker
            }
            let made = ImageSize(width: image.width, height: image.frameSize.height)
            if let done = try await incremental.madeEarlierAtItsSize(job, size: made) { return .finished(.success(done)) }
            stage = .encode
            let pending = try await queues.encode.run(for: name, output: output) { [writer, job] isCancelled in
                try deadline.check(.encode, output: output)
                // Asked as the encode starts, not as the job does: every output of a source
                // starts together, and a neighbouring width's choice is known only once its
                // encode has finished.
                let searchStart = incremental.startingQuality(for: job, chosen: chosen)
                let pending = try deadline.vips.watching(image) { own in
                    try writer.write(
                        own, output: job.output.searchingFrom(searchStart), target: job.target, input: job.input,
                        planned: planned, fingerprint: job.fingerprint, sourceSize: decoded.originalSize, isCancelled: isCancelled)
                }
                // Noted in the lane, before it takes the next encode (a neighbour's, perhaps)
                // and before the commit.
                chosen.note(pending.output, for: job)
                return pending
            }
            if deadline.hasRunOut {
                pending.file?.discard()
                return .finished(.failure(deadline.timedOut(in: .encode, output: output, beforeCommit: true)))
            }
            let written = try await committer.commit(pending)
            incremental.recordWritten(written, for: job, sourceSize: decoded.originalSize)
            return .finished(.success(written))
        } catch {
            let failure = try self.failure(error, stage: .process)
            // Work stopped by the deadline fails with whatever libvips said: the limit is the
            // reason, in the step that was running when it is known.
            if failure.kind != .timedOut, deadline.hasRunOut {
                return .finished(.failure(deadline.timedOut(in: stage, output: output, step: failure.step)))
            }
            return .finished(.failure(failure))
        }
    }
}

/// The counts a run's summary gives, kept as reports arrive.
private struct RunTotals {
    var succeeded = 0, failed = 0, written = 0, upToDate = 0

    /// Counts the reports of one source's listings. A listing that repeats another reports
    /// the same files, which are counted once: they were written once.
    mutating func count(_ reports: [ItemReport]) {
        var counted = Set<String>()
        for report in reports {
            if report.succeeded { succeeded += 1 } else { failed += 1 }
            count(files: report.written.filter { counted.insert($0.path).inserted })
        }
    }

    /// Counts files written and up to date: a report's, or those of a source a cancel left
    /// part-made, which is not run rather than succeeded or failed.
    mutating func count(files: [WrittenOutput]) {
        written += files.filter { !$0.upToDate }.count
        upToDate += files.filter(\.upToDate).count
    }

    func summary(inputs: Int, elapsed: Duration, cancelled: Bool, peakInFlight: Int) -> RunSummary {
        RunSummary(
            inputs: inputs, succeeded: succeeded, failed: failed, notRun: inputs - succeeded - failed,
            outputsWritten: written, outputsUpToDate: upToDate, elapsed: elapsed, cancelled: cancelled,
            peakInFlight: peakInFlight)
    }
}
