#if Server
import PipelineKit

/// What the last run over one local input reported, with the versions of the input before that
/// run and of the files it found or made after it: while both are as they were, the next request
/// is answered from here, as the run would answer it, without a run and without reading the
/// journal (the warm path). Anything changed, or not known, goes to a run.
///
/// The input's version is taken before the run: an input changed while the run went has another
/// version by the next request, which a run then answers.
struct WarmReport: Sendable {
    /// The input's version before the run.
    let input: FileStamp
    /// The run's report.
    let report: ItemReport
    /// The version of each file of the report, by its path, after the run.
    let files: [String: FileStamp]

    /// The warm answer for a run that started with the input at `input` and reported `report`;
    /// nil when the report cannot stand in for a later run: something failed, a file is not
    /// fingerprinted (no journal: every run makes it again), or a file is not (or no longer) the
    /// one the run reported.
    init?(input: FileStamp, report: ItemReport) {
        guard report.succeeded, !report.written.isEmpty else { return nil }
        var files: [String: FileStamp] = [:]
        for file in report.written {
            guard file.fingerprint != nil, let stamp = FileStamp(path: file.path), stamp.size == Int64(file.byteCount) else { return nil }
            files[file.path] = stamp
        }
        self.input = input
        self.report = report
        self.files = files
    }

    /// `file` of the report as a later run would report it: found up to date on disk.
    static func foundOnDisk(_ file: WrittenOutput) -> WrittenOutput {
        WrittenOutput(
            output: file.output, path: file.path, size: file.size, byteCount: file.byteCount, upToDate: true, format: file.format,
            fingerprint: file.fingerprint, warnings: file.warnings, searchedQuality: file.searchedQuality)
    }

    /// Whether `file` of the report may be answered now: the input at `inputPath` and the file
    /// are both still at the versions the run left them at.
    func isCurrent(_ file: WrittenOutput, inputPath: String) -> Bool {
        guard let made = files[file.path], FileStamp(path: file.path) == made else { return false }
        return FileStamp(path: inputPath) == input
    }
}
#endif
