/// A source's reports, one per listing, from what became of its jobs.
extension RunExecution {
    /// One report per listing from the outcomes of its jobs; `makingOriginal` are the outputs,
    /// by index, whose files are also `"original"`'s.
    static func reports(
        _ listings: [RunPlan.Listing], _ jobs: [OutputJob], _ results: [Result<WrittenOutput, ItemError>],
        originalSize: ImageSize?, makingOriginal: Set<Int> = []
    ) -> [ItemReport] {
        listings.enumerated().map { index, listing in
            var written: [WrittenOutput] = []
            var paths: Set<String> = []
            var failures: [ItemFailure] = []
            for (job, result) in zip(jobs, results) where job.listing == index {
                switch result {
                case .success(var output):
                    let isOriginal =
                        output.isOriginal || job.output.variant.map { $0.width == nil } ?? false
                        || makingOriginal.contains(job.outputIndex)
                    // Widths that stood in for a trimmed image's own find its one file up to date.
                    guard paths.insert(output.path).inserted else {
                        if isOriginal, let first = written.firstIndex(where: { $0.path == output.path }) {
                            written[first].isOriginal = true
                        }
                        continue
                    }
                    output.art = job.output.variant?.art
                    output.isOriginal = isOriginal
                    written.append(output)
                case .failure(let error):
                    failures.append(
                        ItemFailure(
                            input: listing.input.displayName, output: job.output.name, error: error, file: job.output.variantDescription,
                            format: job.output.encoder.format, art: job.output.variant?.art))
                }
            }
            return ItemReport(input: listing.input, written: written, failures: failures, originalSize: originalSize)
        }
    }

    /// Reports of listings that failed as a whole, before fan-out.
    static func failed(_ listings: [RunPlan.Listing], _ error: ItemError) -> [ItemReport] {
        listings.map { listing in
            ItemReport(
                input: listing.input, written: [],
                failures: [ItemFailure(input: listing.input.displayName, output: nil, error: error)], originalSize: nil)
        }
    }
}
