import ArgumentParser
import PipelineKit

/// `--max-memory`, shared by `run`, `watch` and `explain`: the run's memory limit when the
/// environment sets none, or a stricter one than it sets.
struct MemoryOptions: ParsableArguments {
    // Taken whatever it starts with, so that -1 is refused as a size, not missed as a flag.
    @ArgumentParser.Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Keep the run's images within this much memory, such as 600MB or 2GiB: inputs wait rather than start decoding past it, and one that could never fit fails (downloads are held beside it, up to fetch.maxBytes each: explain shows them). Without it, the container's cgroup limit or ulimit -v, if any.",
            valueName: "size"))
    var maxMemory: String?

    func validate() throws {
        guard let maxMemory else { return }
        guard let bytes = Units.bytes(in: maxMemory) else {
            throw ValidationError("--max-memory: expected a size such as 600MB or 2GiB, not \"\(maxMemory)\"")
        }
        if bytes <= 0 { throw ValidationError("--max-memory: must be more than 0") }
    }

    /// Sets the pipeline's limit from the option (the environment's is found when the run starts).
    func apply(to pipeline: inout Pipeline) {
        pipeline.configuration.maxMemory = maxMemory.flatMap(Units.bytes(in:))
        pipeline.configuration.maxMemorySource = "--max-memory"
    }

    /// Refuses a limit that leaves nothing for images beside what the process needs of its own,
    /// under which every input would fail: for `run`, `watch` and `serve`, while `explain`
    /// shows such a budget.
    func checkRoomForImages() throws {
        guard let maxMemory else {
            // The environment's limit (a cgroup's, `ulimit -v`) may leave nothing either.
            guard let budget = MemoryBudget.detect(), budget.bytes == 0 else { return }
            throw ValidationError(
                "the memory limit of \(MemoryBudget.megabytes(budget.limit)) from \(budget.source) leaves nothing for images beside "
                    + "what the process needs of its own (libraries, threads, encoders): raise it")
        }
        guard let bytes = Units.bytes(in: maxMemory), let budget = MemoryBudget.detect(explicit: bytes), budget.bytes == 0 else { return }
        throw ValidationError(
            "--max-memory: \(maxMemory) leaves nothing for images beside the \(MemoryBudget.megabytes(MemoryBudget.overhead)) "
                + "the process needs of its own (libraries, threads, encoders): give more")
    }
}
