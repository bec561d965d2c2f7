/// One memory budget, with every allowance within it, that several runs of a process draw on
/// together: a server making one input per run as requests ask for them keeps all of its runs
/// within one limit, as a batch run keeps its inputs. Runs started without one have a budget
/// each (`Pipeline.memoryBudget()`), which suits runs that go one after another.
///
/// ```swift
/// let memory = pipeline.sharedMemoryBudget()
/// let first = pipeline.run(plan.keeping { $0.input == a }, memory: memory)
/// let second = pipeline.run(plan.keeping { $0.input == b }, memory: memory)
/// ```
public final class SharedMemoryBudget: Sendable {
    /// The account the runs share.
    let accountant: MemoryAccountant

    init(budget: MemoryBudget?) {
        accountant = MemoryAccountant(budget: budget, shared: true)
    }

    /// The budget the runs share; nil when no limit is known (then the in-flight window of each
    /// run, and the allowances at their ceilings, bound them).
    public var budget: MemoryBudget? { accountant.budget }
}

extension Pipeline {
    /// A budget for runs to share (`run(_:memory:)`), from the same limit a run's own would
    /// come from: `--max-memory`, the cgroup's limit or `RLIMIT_AS`, less what the process
    /// holds now.
    public func sharedMemoryBudget() -> SharedMemoryBudget {
        SharedMemoryBudget(budget: memoryBudget())
    }
}
