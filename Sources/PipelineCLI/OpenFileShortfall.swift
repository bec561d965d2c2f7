import ArgumentParser
import PipelineKit

/// How the open-file limit (after raising it to the hard limit) holds a run to fewer inputs in
/// flight than its file asks for. Said once the plan has counted the inputs: a run of fewer
/// inputs than the limit allows at a time is not slowed, and hears nothing.
struct OpenFileShortfall {
    /// The limit, `ulimit -n`.
    let limit: Int
    /// The inputs in flight that fit in it.
    let fitting: Int
    /// The inputs in flight the file asks for.
    let inFlight: Int

    /// The shortfall of a run asking for `inFlight` inputs at a time, or nil when the limit
    /// holds them all. Stops the command (exit status 1), saying so, when the limit leaves no
    /// room for even one input.
    static func check(inFlight: Int) throws -> OpenFileShortfall? {
        let needed = OpenFileLimit.needed(inFlight: inFlight)
        guard let limit = OpenFileLimit.current, limit < needed else { return nil }
        guard let fitting = OpenFileLimit.inFlight(fitting: inFlight) else {
            printError(
                "error: this process may have only \(limit) files open at once (ulimit -n), and a run needs at least "
                    + "\(OpenFileLimit.needed(inFlight: 1)) for one input at a time: raise it with ulimit -n")
            throw ExitCode.failure
        }
        return OpenFileShortfall(limit: limit, fitting: fitting, inFlight: inFlight)
    }

    /// The warning for a run of `inputs` inputs, or nil when no more of them than fit could be
    /// in flight at once.
    func warning(inputs: Int) -> String? {
        let wanted = min(inFlight, inputs)
        guard wanted > fitting else { return nil }
        let needed = OpenFileLimit.needed(inFlight: wanted)
        return "warning: this process may have only \(limit) files open at once (ulimit -n), so the run takes at most \(fitting) "
            + "input\(fitting == 1 ? "" : "s") at a time rather than \(wanted) (it would need about \(needed)): raise it with ulimit -n"
    }
}
