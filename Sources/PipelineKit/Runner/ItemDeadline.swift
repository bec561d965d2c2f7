import Vips

/// `limits.itemTimeout`: one input's clock, from the start of its decode to the commit of its
/// last output. Its libvips deadline (`vips`) stops the work libvips is doing for the input (the
/// decoder's own `decompress.timeout` lies within it, and every output's steps and encoder
/// render under it); a stage that would start after the time has run out does not, and a file
/// encoded after it is removed rather than committed. The same runner makes the server's files,
/// so its requests are bounded alike.
final class ItemDeadline: Sendable {
    /// The clock libvips' work runs under.
    let vips: VipsDeadline
    /// The input, as reports name it.
    let input: String

    /// Starts the clock of `input`, which has `seconds` (0 for no limit). The run's own deadline
    /// (`run`) stops its work too when the run stops its work (`RunExecution.stopWork()`), with no
    /// time run out.
    init(seconds: Double, input: String, within run: VipsDeadline? = nil) {
        vips = VipsDeadline(seconds: seconds, within: run)
        self.input = input
    }

    /// Whether the time has run out.
    var hasRunOut: Bool { vips.hasRunOut }

    /// Throws the input's `timedOut` error when the time has run out, as an output's work in
    /// `stage` takes its lane: the time ran out while that work waited for one.
    func check(_ stage: Stage, output: String? = nil) throws(ItemError) {
        if hasRunOut { throw timedOut(in: stage, output: output, waitingForLane: true) }
    }

    /// The failure of an input whose time ran out in `stage`, naming the input, the stage (and
    /// the output, after decoding, and the `step` that was stopped) and the limit, and whether
    /// the work had a lane yet: a small input behind large ones can run out of time waiting,
    /// which is not the input's own cost.
    func timedOut(
        in stage: Stage, output: String? = nil, step: ItemError.Step? = nil, beforeCommit: Bool = false, waitingForLane: Bool = false
    ) -> ItemError {
        let doing: String
        switch (stage, output) {
        case (.process, let name?) where waitingForLane:
            doing = "before the steps of output \"\(name)\" began, while they waited for a process lane"
        case (.encode, let name?) where waitingForLane:
            doing = "before output \"\(name)\" was encoded, while it waited for an encode lane"
        case (.process, let name?): doing = "while running the steps of output \"\(name)\""
        case (.encode, let name?) where beforeCommit: doing = "after encoding output \"\(name)\", before its file was committed"
        case (.encode, let name?): doing = "while encoding output \"\(name)\""
        default: doing = "while decoding"
        }
        return ItemError(
            .timedOut, stage: stage,
            reason: "\(input) took longer than limits.itemTimeout (\(Units.text(seconds: vips.seconds))) and was stopped \(doing)",
            step: step)
    }

    /// Stops the clock, once the input is done.
    func cancel() {
        vips.cancel()
    }
}
