/// A run limited to one file of each of its sources: what a server's request names (one output,
/// one format, one width or the widest, of the output's own widths or of one art crop), so that
/// the request waits for that file alone.
extension RunPlan {
    /// One file of one output, as a request names it. The run decodes, processes and encodes
    /// for it alone; the source's other outputs are reported when the journal finds them up to
    /// date (so the manifest entry keeps every file that exists) and are not made otherwise.
    package struct WantedFile: Sendable, Hashable {
        /// The output's name in the pipeline file.
        package let output: String
        /// The format asked for, one of the output's.
        package let format: EncoderSettings.Format
        /// The width asked for, one of the output's `widths` (or its art crop's), or nil for the
        /// widest made or for `"original"`.
        package let width: Int?
        /// Whether `"original"` is asked for: the image's own width, which in a set that
        /// enlarges is not the widest.
        package let original: Bool
        /// The index in the output's `art` of the crop asked for, or nil for the output's own
        /// widths.
        package let art: Int?

        /// The file of `output` in `format` at `width` (nil: the widest made, or with `original`
        /// the image's own width), of the art crop `art` (nil: of the output's own widths).
        package init(output: String, format: EncoderSettings.Format, width: Int?, original: Bool = false, art: Int? = nil) {
            self.output = output
            self.format = format
            self.width = width
            self.original = original && width == nil
            self.art = art
        }

        /// Whether `job` makes a file of this output, format and art crop (or of the output's own
        /// widths).
        private func matches(_ job: OutputJob) -> Bool {
            job.output.name == output && job.output.encoder.format == format && job.output.variant?.art == art
        }

        /// Of `jobs`, judged by the journal before the image's size is known: those up to date,
        /// and those that may make the file asked for. When the width asked for is up to date,
        /// that file answers: only the jobs up to date are left.
        func candidates(_ jobs: [OutputJob]) -> [OutputJob] {
            let exactDone = width != nil && jobs.contains { matches($0) && $0.output.variant?.width == width && $0.upToDate != nil }
            return jobs.filter { $0.upToDate != nil || (!exactDone && matches($0)) }
        }

        /// Of `jobs`, left once the image's size has left out the widths it is too narrow for:
        /// those up to date, and for each listing the one job that makes the file asked for —
        /// the width asked for; for `"original"`, its job or the width that makes its file; or
        /// else (a width above the image's own, or none asked) the file made at the widest: an
        /// enlarged width (`widths` tells which), else the image's own width.
        func chosen(_ jobs: [OutputJob], widths: WidthsAtSize) -> [OutputJob] {
            var picked: Set<[Int]> = []
            func widest(_ jobs: [OutputJob]) -> OutputJob? {
                jobs.max { ($0.output.variant?.width ?? 0) < ($1.output.variant?.width ?? 0) }
            }
            for listing in Set(jobs.map(\.listing)) {
                let candidates = jobs.filter { $0.listing == listing && matches($0) }
                let exact = width.flatMap { width in candidates.first { $0.output.variant?.width == width } }
                let own = candidates.first { $0.output.variant?.width == nil }
                let asOriginal = original ? own ?? candidates.first { widths.makingOriginal.contains($0.outputIndex) } : nil
                let enlarged = widest(candidates.filter { widths.enlarged.contains($0.outputIndex) })
                if let job = exact ?? asOriginal ?? enlarged ?? own ?? widest(candidates) {
                    picked.insert([job.listing, job.outputIndex])
                }
            }
            return jobs.filter { $0.upToDate != nil || picked.contains([$0.listing, $0.outputIndex]) }
        }
    }

    /// This plan with only the sources at `positions` in `items`, each making only `wanted`
    /// (nil: every output), for a server's run for one request.
    package func keeping(sourcesAt positions: some Sequence<Int>, wanted: WantedFile?) -> RunPlan {
        var plan = keeping(sourcesAt: positions)
        plan.wantedFile = wanted
        return plan
    }
}
