#if Server
import PipelineKit

/// What the last run over one local input reported, with the journal's verdict on its files
/// (`OutputJournal.Verdict`): while the verdict holds, the next request is answered from here, as
/// a run would answer it, without a run and without reading the journal (the warm path).
/// Anything changed, or not known, goes to a run.
struct WarmReport: Sendable {
    /// The run's report.
    let report: ItemReport
    /// Which of its files a run would still find up to date.
    let verdict: OutputJournal.Verdict

    /// The warm answer for a run that started with the input at `input` and reported `report`;
    /// nil when the report cannot stand in for a later run (see `OutputJournal.Verdict`).
    init?(input: FileStamp, report: ItemReport) {
        guard let verdict = OutputJournal.Verdict(input: input, report: report) else { return nil }
        self.report = report
        self.verdict = verdict
    }

    /// The version of `file` the run left, which the answer is sent from.
    func stamp(of file: WrittenOutput) -> FileStamp? { verdict.files[file.path] }

    /// `file` of the report as a later run would report it: found up to date on disk.
    static func foundOnDisk(_ file: WrittenOutput) -> WrittenOutput {
        var found = WrittenOutput(
            output: file.output, path: file.path, size: file.size, byteCount: file.byteCount, upToDate: true, format: file.format,
            fingerprint: file.fingerprint, warnings: file.warnings, searchedQuality: file.searchedQuality)
        found.art = file.art
        return found
    }

    /// Whether `file` of the report may be answered now: a run would find it up to date.
    func isCurrent(_ file: WrittenOutput, inputPath: String) -> Bool {
        verdict.isUpToDate(file.path, inputPath: inputPath)
    }
}
#endif
