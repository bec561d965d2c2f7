/// The stage queues and the committer that several runs of a process share: a server making
/// one input per run as requests ask for them keeps all of its runs within the widths the
/// pipeline file gives each stage, as a batch run keeps its inputs, and its written files are
/// flushed and renamed in one line. Runs started without them have queues and a committer each,
/// which suits runs that go one after another.
///
/// Runs that share them report no `stageFinished` events: an operation on a shared queue is
/// not one run's to trace.
///
/// ```swift
/// let (memory, stages) = (pipeline.sharedMemoryBudget(), SharedStages(pipeline))
/// let first = pipeline.run(plan.keeping { $0.input == a }, memory: memory, stages: stages)
/// let second = pipeline.run(plan.keeping { $0.input == b }, memory: memory, stages: stages)
/// ```
public final class SharedStages: Sendable {
    /// One queue per stage, as wide as the pipeline file says.
    let queues: StageQueues
    /// Flushes and renames the files every run writes.
    let committer = FileCommitter()

    /// Queues as wide as `pipeline`'s file says for each stage.
    public init(_ pipeline: Pipeline) {
        queues = StageQueues(pipeline.definition) { _ in }
    }

    /// Each stage's queued, running and done counts now, over every run that shares them.
    public var counts: [Stage: StageCounts] { queues.counts }
}
