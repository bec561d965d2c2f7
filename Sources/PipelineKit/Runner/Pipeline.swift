import Foundation

/// A checked pipeline, ready to plan and run: the library's entry point.
///
/// ```swift
/// let pipeline = try Pipeline(contentsOf: url, processors: .standard)
/// for await event in try pipeline.run() { … }
/// ```
public struct Pipeline: Sendable {
    /// The checked pipeline file.
    public let definition: PipelineDefinition
    /// How errors name the pipeline: its path, or `<string>`.
    public let fileName: String
    /// Process-wide settings applied when a run starts (libvips' threads per image).
    public var configuration = Configuration()
    /// The variables S3 credentials, region and endpoint are read from (`AWS_ACCESS_KEY_ID`, …):
    /// by default this process's environment.
    public var environment: [String: String] = ProcessInfo.processInfo.environment
    /// Files the caller writes besides the run's own (a trace, a report): checked with the
    /// outputs, the manifest and the journal before anything runs, so none lands on an input.
    public var sideWrites: [SideWrite] = []
    /// How a run of a pipeline without a file names itself in its claim on the files it writes
    /// (`"pipeline convert"`), so that it and a run of a pipeline file do not write one file at
    /// once; nil, the default, claims nothing. A run of a file claims by the file's path.
    public var claimant: String?
    /// Asked while the inputs are found, between and within a bucket's requests: true stops
    /// the listing, and planning fails, rather than waiting out its timeouts and retries (a
    /// command stopped by a signal before its run began). By default, never.
    public var stopsPlanning: @Sendable () -> Bool = { false }

    /// Reads and checks a pipeline file; relative paths in it resolve against its folder.
    ///
    /// - Parameters:
    ///   - url: the pipeline file.
    ///   - processors: the steps the file may name.
    ///   - displayName: how errors name the file (default: its full path), for example the path
    ///     as the user typed it.
    public init(contentsOf url: URL, processors: ProcessorRegistry, displayName: String? = nil) throws(PipelineFileError) {
        fileName = displayName ?? url.path
        definition = try PipelineDefinition(contentsOf: url, processors: processors, displayName: fileName)
    }

    /// Checks a pipeline given as JSON text; relative paths resolve against `baseDirectory`.
    public init(json: String, baseDirectory: URL, processors: ProcessorRegistry) throws(PipelineFileError) {
        definition = try PipelineDefinition(json: json, baseDirectory: baseDirectory, processors: processors)
        fileName = "<string>"
    }

    /// A pipeline of a definition already checked, named `fileName` in errors.
    public init(definition: PipelineDefinition, fileName: String = "<definition>") {
        self.definition = definition
        self.fileName = fileName
    }

    /// Whether a run claims the files it writes: one of a file, or one given a `claimant`.
    private var claims: Bool { claimingName != nil }

    /// What a run's claim names it by: the real path of its file, else its `claimant`.
    private var claimingName: RunClaim.Claimant? {
        if let file = definition.sourceFile { return .file(WriteCheck.realPath(file.path) ?? file.path) }
        return claimant.map(RunClaim.Claimant.oneOff)
    }

    /// Finds the inputs and checks every output path, without running anything; with a
    /// `shard`, keeps only that shard's inputs. `allowingNoInputs` takes a plan that finds no
    /// input as `"allowEmpty": true` would: a server whose inputs have all been removed since it
    /// started answers 404 for them.
    public func plan(shard: Shard? = nil, allowingNoInputs: Bool = false) throws(PipelineFileError) -> RunPlan {
        try RunPlan(
            definition, fileName: fileName, shard: shard,
            stores: ObjectStoreAccess(definition: definition, environment: environment, loader: nil, stopsPlanning: stopsPlanning),
            sideWrites: sideWrites, claims: claims, allowingNoInputs: allowingNoInputs)
    }

    /// Plans the run, then starts it. Events arrive as the run goes; cancelling the task that
    /// iterates them (or dropping the sequence and its iterator, as leaving a loop in a function
    /// does) cancels the run: queued work is skipped, work in progress finishes, and no partial
    /// file is left behind. A loop in top-level code (`main.swift`) keeps its iterator for as
    /// long as the program runs: there, `cancel()` stops the run.
    ///
    /// - Parameters:
    ///   - dataLoader: fetches URLs; by default libcurl with the file's `fetch` settings.
    ///   - cache: keeps fetched bytes between runs; by default the disk cache the file's `cache`
    ///     section describes (none when it says `"enabled": false`).
    ///   - force: make every output, even those an earlier run made from the same input and
    ///     settings (incremental runs skip those, unless the file says `"incremental": false`).
    ///   - shard: make only this shard's inputs (see `Shard`).
    /// - Throws: `PipelineFileError` when planning finds clashing output paths or unreadable
    ///   input lists, or the memory limit leaves nothing for images; nothing has run then.
    public func run(
        dataLoader: (any DataLoading)? = nil, cache: (any DataCaching)? = nil, force: Bool = false,
        shard: Shard? = nil
    ) throws(PipelineFileError) -> PipelineRun {
        if let budget = memoryBudget(), budget.bytes == 0 {
            // Every input would fail, each saying it needs more than nothing.
            let problem =
                "the memory limit of \(MemoryBudget.megabytes(budget.limit)) from \(budget.source) leaves nothing for images beside "
                + "the \(MemoryBudget.megabytes(MemoryBudget.overhead)) the process needs of its own (libraries, threads, encoders): raise it"
            throw PipelineFileError(file: fileName, problems: [.init(path: "", location: nil, message: problem)])
        }
        let journal = openJournal()
        let loader = dataLoader ?? defaultDataLoader()
        // Stores make their own loaders unless given one, as `validate` has them: planning's
        // question to a bucket is then bounded by a timeout of its own, not the fetch's.
        var plan = try RunPlan(
            definition, fileName: fileName, shard: shard,
            stores: ObjectStoreAccess(definition: definition, environment: environment, loader: dataLoader, stopsPlanning: stopsPlanning),
            sideWrites: sideWrites,
            claims: claims)
        // The journal says itself, at the end, what it could not record: a run that makes
        // nothing loses nothing by a folder it cannot write.
        let folderWarnings = cacheFolderWarnings(plan, diskCache: cache == nil)
        let cache = cache ?? defaultCache()
        if !folderWarnings.isEmpty { (cache as? DiskCache)?.holdWarningOfItsFolder() }
        plan = plan.adding(warnings: (journal?.warnings ?? []) + folderWarnings)
        var claim: RunClaim?
        if let outputs = plan.outputPaths, let claimant = claimingName {
            claim = try RunClaim.claim(outputs, claimant: claimant, fileName: fileName, environment: environment)
        }
        // Before any work, like planning: remove what a killed run left half-written.
        TemporaryFileSweeper.sweep(plan)
        return start(plan, dataLoader: loader, cache: cache, journal: journal, force: force, claim: claim)
    }

    /// Runs the sources of a plan made earlier by `plan()` (all of them, or those
    /// `RunPlan.keeping(_:)` kept), as `run()` does, with the journal read afresh: for a program
    /// that makes inputs one at a time as they are asked for, such as a server. Temporary files a
    /// killed run left are not swept here; `sweepLeftovers(_:)` does that once, before the first.
    ///
    /// - Parameters:
    ///   - plan: the plan to run, from `plan()`.
    ///   - dataLoader: fetches URLs; by default libcurl with the file's `fetch` settings.
    ///   - cache: keeps fetched bytes between runs; by default the file's disk cache.
    ///   - memory: a budget this run shares with others going at the same time; by default the
    ///     run has one of its own.
    ///   - stages: stage queues and a committer this run shares with others going at the same
    ///     time; by default the run has its own.
    public func run(
        _ plan: RunPlan, dataLoader: (any DataLoading)? = nil, cache: (any DataCaching)? = nil, memory: SharedMemoryBudget? = nil,
        stages: SharedStages? = nil
    ) -> PipelineRun {
        let journal = openJournal(
            plannedPaths: plan.isPart ? plan.items.flatMap { $0.listings.flatMap { $0.targets.filter(\.isMade).map(\.plannedPath) } } : nil)
        return start(
            plan.adding(warnings: journal?.warnings ?? []), dataLoader: dataLoader ?? defaultDataLoader(), cache: cache,
            journal: journal, force: false, memory: memory, stages: stages)
    }

    /// The journal of incremental runs, read now (only the records of `plannedPaths`, when
    /// given); nil when the file disables them.
    private func openJournal(plannedPaths: [String]? = nil) -> OutputJournal? {
        guard definition.incremental else { return nil }
        return OutputJournal(
            file: definition.cache.journalFile(pipeline: definition.name, baseDirectory: definition.baseDirectory),
            definition: definition, plannedPaths: plannedPaths)
    }

    /// Removes what a killed run left half-written in the folders `plan` writes to.
    public func sweepLeftovers(_ plan: RunPlan) {
        TemporaryFileSweeper.sweep(plan)
    }

    private func start(
        _ plan: RunPlan, dataLoader: any DataLoading, cache: (any DataCaching)?, journal: OutputJournal?, force: Bool,
        memory: SharedMemoryBudget? = nil, stages: SharedStages? = nil, claim: RunClaim? = nil
    ) -> PipelineRun {
        applyConfiguration()
        return PipelineRun(
            plan: plan, dataLoader: dataLoader, cache: cache ?? defaultCache(),
            journal: journal, force: force, memory: memory?.accountant ?? MemoryAccountant(budget: memoryBudget()), stages: stages,
            claim: claim)
    }

    /// A warning when the disk cache of fetched inputs is needed but its folder cannot be
    /// written: otherwise every run would quietly fetch everything again.
    private func cacheFolderWarnings(_ plan: RunPlan, diskCache: Bool) -> [String] {
        let settings = definition.cache
        let caching =
            diskCache && settings.enabled
            && (plan.items.containsRemote
                || definition.outputs.contains { $0.steps.contains { $0.resources.contains { !$0.isFileURL } } })
        guard caching, let reason = settings.writeProblem() else { return [] }
        return ["cannot write in the cache folder \(settings.directory.path): \(reason): fetched inputs are not cached"]
    }

    /// libcurl, configured from the file's `fetch` section.
    public func defaultDataLoader() -> CurlDataLoader {
        CurlDataLoader(fetch: definition.fetch)
    }

    /// The disk cache the file's `cache` section describes, or nil when it is disabled.
    public func defaultCache() -> DiskCache? {
        guard definition.cache.enabled else { return nil }
        return DiskCache(directory: definition.cache.directory, maxSize: definition.cache.maxSize)
    }
}

/// The events of one run, as an `AsyncSequence`; the run starts when the sequence is made.
///
/// Two ways to stop it: cancel the task iterating the events (the sequence ends at once and the
/// run winds down behind it), or call `cancel(stoppingRunningWork:)` and keep iterating to receive the reports of
/// the work that was already running and a final `finished` with `cancelled` set.
public struct PipelineRun: AsyncSequence, Sendable {
    /// Each event of the run.
    public typealias Element = PipelineEvent
    private let events: AsyncStream<PipelineEvent>
    private let task: Task<Void, Never>
    private let execution: RunExecution

    init(
        plan: RunPlan, dataLoader: any DataLoading, cache: (any DataCaching)?, journal: OutputJournal?, force: Bool,
        memory: MemoryAccountant, stages: SharedStages? = nil, claim: RunClaim?
    ) {
        let (events, continuation) = AsyncStream.makeStream(of: PipelineEvent.self, bufferingPolicy: .unbounded)
        let manifest = plan.definition.manifest.map {
            ManifestWriter(
                settings: $0.forShard(plan.shard), definition: plan.definition, keepsOtherEntries: plan.isPart,
                stored: StoredOutputs(stores: plan.stores), shardPlan: plan)
        }
        let execution = RunExecution(
            plan: plan, dataLoader: dataLoader, cache: cache, journal: journal, force: force, memory: memory, stages: stages,
            manifest: manifest,
            emit: { continuation.yield($0) })
        let running = Task {
            await execution.run()
            // The run's files are let go once it has ended, before anyone sees it end.
            claim?.release()
            continuation.finish()
        }
        continuation.onTermination = { _ in running.cancel() }
        self.events = events
        self.execution = execution
        self.task = running
    }

    /// How many operations each stage has queued, running and done right now (for progress).
    public func stageCounts() -> [Stage: StageCounts] {
        execution.stageCounts
    }

    /// Stops the run: queued work is skipped, events go on until `finished`. Running work
    /// finishes, or with `stoppingRunningWork`, stops where libvips next looks (a decode or a
    /// step between two strips; a codec's own call, such as an AVIF encode, runs to its end),
    /// as an input's time limit stops it. Either way each file is whole or not there.
    public func cancel(stoppingRunningWork: Bool = false) {
        if stoppingRunningWork { execution.stopWork() }
        task.cancel()
    }

    /// Stops the run as `cancel()` does, giving running work `grace` to finish: what is still
    /// running then is stopped as `cancel(stoppingRunningWork: true)` stops it. Most running work
    /// ends well within a second, but an animation's encode or a huge decode can outlast the
    /// grace period a container gets between SIGTERM and SIGKILL.
    public func cancel(stoppingRunningWorkAfter grace: Duration) {
        task.cancel()
        Task { [execution] in
            try? await Task.sleep(for: grace)
            execution.stopWork()
        }
    }

    /// How long a run stopped by a signal (`pipeline run` and `watch`) lets its running work
    /// finish: within `docker stop`'s ten seconds and Kubernetes' thirty.
    public static let signalGrace: Duration = .seconds(5)

    /// Waits until the run has ended: the work that was on its lanes done, every file whole or
    /// not there, its manifest and journal written. A program that cancelled the task iterating
    /// the events (whose sequence then ends at once, the run winding down behind it) waits here
    /// before it reads, moves or removes what the run writes, or exits.
    public func ended() async {
        await task.value
    }

    /// The run's events, in order; one iteration only.
    public func makeAsyncIterator() -> AsyncStream<PipelineEvent>.Iterator {
        events.makeAsyncIterator()
    }

    /// Waits for the run to end and returns its summary (and the reports, in completion order).
    public func collect() async -> (reports: [ItemReport], summary: RunSummary?) {
        var reports: [ItemReport] = []
        var summary: RunSummary?
        for await event in self {
            switch event {
            case .started, .itemStarted, .stageFinished: break
            case .itemCompleted(let report): reports.append(report)
            case .finished(let final): summary = final
            }
        }
        return (reports, summary)
    }
}
