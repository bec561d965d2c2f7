/// A width of a set whose image reached its resize narrower than the plan could tell (after a
/// `trim`) may make another width's file: that width's job makes it, once.
extension RunExecution {
    /// What became of one job.
    enum JobOutcome: Sendable {
        case finished(Result<WrittenOutput, ItemError>)
        /// Not made: its image turned out to make the file of the job, beside it, for the output
        /// at this index (of the same listing).
        case madeBy(outputIndex: Int)
    }

    /// Where the job for another width of a set is found: beside the one whose file turned out
    /// to be its, or else among the jobs a request's choice left out.
    struct Makers: Sendable {
        /// Each job's listing and output index in this fan-out.
        let beside: Set<[Int]>
        /// The jobs the image's size left, before a request's choice of one file.
        let sized: [OutputJob]
        /// Each width's set (`PipelineDefinition.setOfEachWidth`).
        let sets: [Int: [Int]]

        /// Which job makes `job`'s file, its image having been `atResize` as it reached the resize.
        enum Maker {
            /// `job` itself.
            case itself
            /// The job for the output at this index, in this fan-out too.
            case beside(Int)
            /// This job, which a request's choice left out: `job` is made as it.
            case leftOut(OutputJob)
        }

        func maker(of job: OutputJob, atResize: ImageSize?, in definition: PipelineDefinition) -> Maker {
            guard let atResize, let members = sets[job.outputIndex] else { return .itself }
            let maker = definition.maker(ofFileOf: job.outputIndex, in: members, atResize: atResize)
            guard maker != job.outputIndex else { return .itself }
            if beside.contains([job.listing, maker]) { return .beside(maker) }
            guard let other = sized.first(where: { $0.listing == job.listing && $0.outputIndex == maker }) else { return .itself }
            return .leftOut(
                OutputJob(
                    listing: other.listing, input: other.input, outputIndex: other.outputIndex, output: other.output,
                    target: other.target, fingerprint: other.fingerprint, upToDate: nil))
        }
    }
}
