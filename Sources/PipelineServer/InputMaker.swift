#if Server
import Dispatch
import Logging
import PipelineKit

/// Makes the files requests ask for, through a run of the pipeline over that input alone,
/// limited to the one file asked for (`RunPlan.WantedFile`; every output of the input with
/// `serve.makeAll`): the same steps, limits, atomic writes and journal as a batch run, so an
/// output a batch run made is found up to date and one made here is found by the next batch
/// run. Every run draws on one memory budget and goes through one set of stage queues and one
/// committer (`SharedStages`), as a batch run's inputs do.
///
/// Requests for one file while its run is going (or waiting to go) wait for that run:
/// concurrent identical requests are one job. Runs for other files of one input go one after
/// another, so that each finds the files the one before made and its manifest entry names them
/// all; so do runs of plans a reload replaced (`RunTurns`). At most `lanes` runs go at once,
/// over every plan, as a batch run keeps at most its in-flight window of inputs between its
/// first stage and its last; up to `queueLimit` more wait their turn, and past that a request
/// is refused, to be tried later.
///
/// What the last run for each file of each local input reported is kept (`warmReport(for:)`):
/// a request for that file whose input and file are as that run left them is answered from
/// it, without a run, which would read the journal's lines of the input to find the same files.
actor InputMaker {
    /// The pipeline the plan is of.
    nonisolated let pipeline: Pipeline
    private let plan: RunPlan
    /// The server's one budget, which every run and every read of an input's placeholders draws on.
    nonisolated let memory: SharedMemoryBudget
    /// The stage queues and the committer every run of this plan shares (and `/info` with them),
    /// so the file's stage widths bound the work of all requests together.
    nonisolated let stages: SharedStages
    /// The lanes, and each source's last run, which every plan's maker shares.
    private let turns: RunTurns
    /// Runs that may go at once.
    let lanes: Int
    /// Runs that may wait for a lane.
    let queueLimit: Int
    /// A run's source, by its index in the plan's items, and the file it is for (nil: every output).
    struct JobKey: Hashable {
        let item: Int
        let variant: RunPlan.WantedFile?
    }
    /// A run going or waiting for a lane, and its reports once it has ended.
    ///
    /// Requests wait for `end`, not for the task: a request cancelled while it waits (the
    /// server stopping past its drain timeout) stops waiting at once, so its connection is
    /// closed then, while the run, cancelled too, stops what is on a lane so that its files are
    /// whole or gone.
    private struct Job: Sendable {
        let task: Task<[ItemReport], Never>
        let end: RunEnd
    }
    /// The job of each source and file going or waiting.
    private var jobs: [JobKey: Job] = [:]
    /// `/info` reads going or waiting for a lane, which count against the queue as runs do.
    private var inspections = 0
    /// What a listing's file is, for the warm path: the listing and the file a run was for.
    private struct WarmKey: Hashable {
        let listing: InputFile
        let variant: RunPlan.WantedFile?
    }
    /// What the last run for each file of each local input reported.
    private var warm: [WarmKey: WarmReport] = [:]
    /// Whether a run's report may stand in for the next run's: only when the journal decides
    /// what is up to date (a file without one makes every output on every run) and no step
    /// uses another image, whose version would be one more thing to check.
    private let keepsReports: Bool
    /// Runs started, for tests to tell a request answered by a run from one answered warm.
    private(set) var runsStarted = 0
    /// Where a run's failures go when no request is left to answer with them, and what a run
    /// could not write beside its files (the manifest, the journal).
    private let logger: Logger
    /// What runs could not write beside their files, since the last that made files without
    /// it: a problem is logged when it appears, not again by every run while it lasts.
    private var problemsLogged: Set<String> = []

    init(pipeline: Pipeline, plan: RunPlan, memory: SharedMemoryBudget, turns: RunTurns, logger: Logger) {
        self.logger = logger
        self.pipeline = pipeline
        self.plan = plan
        self.memory = memory
        self.turns = turns
        stages = SharedStages(pipeline)
        lanes = max(1, plan.definition.inFlight)
        queueLimit = max(0, plan.definition.serve.maxQueue)
        keepsReports =
            plan.definition.incremental && plan.definition.outputs.allSatisfy { $0.steps.allSatisfy { $0.resources.isEmpty } }
    }

    /// What the last run for `variant` of `input` reported, when it may answer again: see
    /// `WarmReport`, whose `isCurrent` says whether the input and the file wanted are still as
    /// they were.
    func warmReport(for input: OutputCatalog.Input, variant: RunPlan.WantedFile?) -> WarmReport? {
        warm[WarmKey(listing: input.listing, variant: variant)]
    }

    /// Why a request was not taken: every lane is busy and the queue is full.
    struct Full: Error {}

    /// The report of `input`'s listing after a run over its source for `variant` (nil: every
    /// output): that file made now or up to date on disk, with the input's other files that are
    /// up to date. Nil when the run ended without one, or the calling task was cancelled while
    /// it waited (the server stopping past its drain timeout).
    ///
    /// - Throws: `Full` when the file has no job yet and the queue has no room.
    func report(for input: OutputCatalog.Input, variant: RunPlan.WantedFile?) async throws(Full) -> ItemReport? {
        let key = JobKey(item: input.item, variant: variant)
        let job: Job
        if let current = jobs[key] {
            job = current
        } else {
            guard turns.admit(within: lanes + queueLimit) else { throw Full() }
            let plan = self.plan.keeping(sourcesAt: [input.item], wanted: variant)
            let source = self.plan.items[input.item].input
            let local = source.isRemote ? nil : source.path
            let end = RunEnd()
            let previous = turns.follow(source.path, ending: end)
            let task = Task {
                // One source's runs go in turn, whichever plan they are of: each then reports
                // (and its manifest entry names) the files the one before made. Waiting so holds
                // no lane.
                _ = await previous?.reports()
                let reports = await self.run(plan, for: variant, local: local)
                self.end(key, source: source.path, at: end, with: reports)
                return reports
            }
            job = Job(task: task, end: end)
            jobs[key] = job
        }
        return await job.end.reports()?.first { $0.input == input.listing }
    }

    /// The reports of a run of `plan` for `variant` (of a `local` input, or nil) on a lane, or
    /// none when the job was cancelled while it waited for one.
    private func run(_ plan: RunPlan, for variant: RunPlan.WantedFile?, local: String?) async -> [ItemReport] {
        await turns.takeLane(limit: lanes)
        defer { turns.leaveLane() }
        // Cancelled while it waited (the server stopping past its drain timeout): no run.
        guard !Task.isCancelled else { return [] }
        runsStarted += 1
        // Before the run: an input changed while it goes is found changed by the next request.
        let stamp = keepsReports ? local.flatMap(FileStamp.init(path:)) : nil
        let (reports, summary) = await Self.outcome(of: plan, by: pipeline, memory: memory, stages: stages)
        remember(reports, input: stamp, variant: variant)
        if let summary { log(summary) }
        return reports
    }

    /// Logs what the run `summary` ends could not write beside its files, which no answer
    /// shows: a manifest (an error, as `pipeline run` exits 1 for it), the journal or the cache
    /// (a warning: the files are made, but made again by the next run).
    private func log(_ summary: RunSummary) {
        // Told apart without their numbers: how many files a run made but did not record
        // changes from run to run, and the problem is the same.
        func kind(_ problem: String) -> String { problem.replacing(/[0-9]+/, with: "#") }
        let problems = summary.warnings + [summary.manifestProblem].compactMap { $0 }
        for problem in problems where !problemsLogged.contains(kind(problem)) {
            if problem == summary.manifestProblem {
                logger.error("a run could not write the manifest", metadata: ["reason": "\(problem)"])
            } else {
                logger.warning("a run could not write beside its files", metadata: ["reason": "\(problem)"])
            }
        }
        // Only a run that made files shows a problem gone: one that made none wrote nothing
        // to find it with.
        if summary.outputsWritten > 0 {
            problemsLogged = Set(problems.map(kind))
        } else {
            problemsLogged.formUnion(problems.map(kind))
        }
    }

    /// Forgets the job of `key` for `source` that ends at `end`, which has ended with `reports`,
    /// and lets its requests go. Failures no request is left to answer with (each gave up at
    /// `serve.timeout`, or its client went away) are logged, so that their cause is seen.
    private func end(_ key: JobKey, source: String, at end: RunEnd, with reports: [ItemReport]) {
        if jobs[key]?.end === end { jobs[key] = nil }
        turns.ended(source, at: end)
        turns.release()
        guard !end.end(with: reports) else { return }
        for report in reports {
            for failure in report.failures {
                logger.warning(
                    "a run no request waited for any more failed",
                    metadata: [
                        "input": "\(report.input.displayName)", "output": "\(failure.output ?? "-")",
                        "reason": "\(failure.error.description)",
                    ])
            }
        }
    }

    /// `work` (an `/info` read, which decodes as a run does) on a lane, after the runs and
    /// reads that came before it, so that `inFlight` and `serve.maxQueue` bound reads and runs
    /// together.
    ///
    /// - Throws: `Full` when every lane is busy and the queue has no room; else what `work` throws.
    func inspection<Result: Sendable>(_ work: @Sendable () async throws -> Result) async throws -> Result {
        guard turns.admit(within: lanes + queueLimit) else { throw Full() }
        inspections += 1
        await turns.takeLane(limit: lanes)
        defer {
            turns.leaveLane()
            turns.release()
            inspections -= 1
        }
        return try await work()
    }

    /// The reports and summary of a run of `plan` (no summary when it was cancelled before
    /// its end). Starting a run reads the journal and the manifest, which
    /// takes as long as they are large: on a thread of its own, neither on this actor, which
    /// every request asks first, nor on the cooperative pool, whose threads answer them.
    ///
    /// Cancelling the calling task (the server stopping past its drain timeout) cancels the
    /// run, which skips what is queued and stops the libvips work on its lanes where libvips
    /// next looks: the events are read to the end by a task of their own, so the run's files are
    /// whole or gone, and no temporary file is left, by the time this returns.
    private static func outcome(of plan: RunPlan, by pipeline: Pipeline, memory: SharedMemoryBudget, stages: SharedStages) async
        -> (reports: [ItemReport], summary: RunSummary?)
    {
        let run = await runBlocking(on: .global(qos: .userInitiated)) { pipeline.run(plan, memory: memory, stages: stages) }
        let collecting = Task { await run.collect() }
        return await withTaskCancellationHandler {
            await collecting.value
        } onCancel: {
            run.cancel(stoppingRunningWork: true)
        }
    }

    /// Cancels every run going or waiting for a lane (the server stopping past its drain
    /// timeout); `finishAll()` then waits for each to end in a known state.
    func cancelAll() {
        for job in jobs.values { job.task.cancel() }
    }

    /// Waits for every run going or waiting to end.
    func finishAll() async {
        for job in Array(jobs.values) { _ = await job.task.value }
    }

    /// Whether runs or `/info` reads are going or waiting.
    var isIdle: Bool { jobs.isEmpty && inspections == 0 }

    /// Runs of this plan going or waiting (for a lane, or for a run of their source), for tests
    /// to see a request's job before it runs.
    var jobCount: Int { jobs.count }

    /// Runs going now, and jobs waiting for a lane, of every plan.
    nonisolated var counts: (going: Int, waiting: Int) { turns.counts }

    /// Keeps each listing's report of a run for `variant` that started with its source at
    /// `input` (nil: not a local file, or not kept), replacing what an earlier run reported.
    private func remember(_ reports: [ItemReport], input: FileStamp?, variant: RunPlan.WantedFile?) {
        for report in reports {
            warm[WarmKey(listing: report.input, variant: variant)] = input.flatMap { WarmReport(input: $0, report: report) }
        }
    }
}

#endif
