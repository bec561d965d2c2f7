import PipelineKit

/// Makes the outputs of one input at a time as requests ask for them, through a run of the
/// pipeline over that input alone: the same steps, limits, atomic writes and journal as a batch
/// run, so an output a batch run made is found up to date and one made here is found by the
/// next batch run. Every run draws on one memory budget, as a batch run's inputs do.
///
/// Requests for one input while its run is going (or waiting to go) wait for that run:
/// concurrent identical requests are one job. At most `lanes` runs go at once, as a batch run
/// keeps at most its in-flight window of inputs between its first stage and its last; up to
/// `queueLimit` more wait their turn, and past that a request is refused, to be tried later.
actor InputMaker {
    private let pipeline: Pipeline
    private let plan: RunPlan
    /// The server's one budget, which every run draws on.
    private let memory: SharedMemoryBudget
    /// Runs that may go at once.
    let lanes: Int
    /// Runs that may wait for a lane.
    let queueLimit: Int
    /// The job of each source going or waiting, by its index in the plan's items.
    private var jobs: [Int: Task<[ItemReport], Never>] = [:]
    /// Runs going now.
    private var going = 0
    /// Jobs waiting for a lane, first come first served.
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(pipeline: Pipeline, plan: RunPlan, memory: SharedMemoryBudget, lanes: Int, queueLimit: Int) {
        self.pipeline = pipeline
        self.plan = plan
        self.memory = memory
        self.lanes = max(1, lanes)
        self.queueLimit = max(0, queueLimit)
    }

    /// Why a request was not taken: every lane is busy and the queue is full.
    struct Full: Error {}

    /// The report of `input`'s listing after a run over its source: its outputs up to date on
    /// disk, or made now. Nil when the run ended without one (cancelled).
    ///
    /// - Throws: `Full` when the input's source has no job yet and the queue has no room.
    func report(for input: OutputCatalog.Input) async throws(Full) -> ItemReport? {
        let task: Task<[ItemReport], Never>
        if let current = jobs[input.item] {
            task = current
        } else {
            guard jobs.count < lanes + queueLimit else { throw Full() }
            let plan = self.plan.keeping(indexIn: input.item)
            let pipeline = self.pipeline
            let memory = self.memory
            task = Task {
                await self.takeLane()
                let reports = await pipeline.run(plan, memory: memory).collect().reports
                self.leaveLane()
                return reports
            }
            jobs[input.item] = task
        }
        let reports = await task.value
        if jobs[input.item] == task { jobs[input.item] = nil }
        return reports.first { $0.input == input.listing }
    }

    /// Runs going now, and jobs waiting for a lane.
    var counts: (going: Int, waiting: Int) { (going, waiting.count) }

    private func takeLane() async {
        guard going >= lanes else {
            going += 1
            return
        }
        // The lane is handed over by `leaveLane`, counted already.
        await withCheckedContinuation { waiting.append($0) }
    }

    private func leaveLane() {
        if waiting.isEmpty {
            going -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}

extension RunPlan {
    /// This plan with only the source at `index` among its items.
    fileprivate func keeping(indexIn index: Int) -> RunPlan {
        let wanted = items[index].input
        return keeping { $0.input == wanted }
    }
}
