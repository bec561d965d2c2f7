/// What a run decided of one input's files, kept so that a later request for one of them is
/// decided as a run would decide it, without a run and without reading the journal again (the
/// server's warm path).
extension OutputJournal {
    /// The files a run reported for one local input, as they were when it ended, with the
    /// input's version before it. A run would find such a file up to date while its fingerprint
    /// holds, and the file is as recorded. Here the settings are the run's, so the fingerprint
    /// holds while the input has that version (`FileStamp.version`, what the fingerprint was made
    /// from). The file must be as it was: the size and time the journal compares, and the same
    /// file too, since an answer is sent from it.
    package struct Verdict: Sendable {
        /// The input's version before the run: one changed while the run went is found changed.
        package let input: FileStamp
        /// Each file of the report, as it was after the run, by its path.
        package let files: [String: FileStamp]

        /// The verdict on `report`, of a run that started with its input at `input`; nil when
        /// it cannot stand for a later run's: something failed, nothing was written, a file is not
        /// fingerprinted (no journal: every run makes it again), or a file is no longer the one
        /// the run reported.
        package init?(input: FileStamp, report: ItemReport) {
            guard report.succeeded, !report.written.isEmpty else { return nil }
            var files: [String: FileStamp] = [:]
            for file in report.written {
                guard file.fingerprint != nil, let stamp = file.committed ?? FileStamp(path: file.path), stamp.size == Int64(file.byteCount)
                else {
                    return nil
                }
                files[file.path] = stamp
            }
            self.input = input
            self.files = files
        }

        /// Whether a run now would find the file at `path` up to date: the input at `inputPath`
        /// is still at the version its fingerprint was made from, and the file is as it was.
        package func isUpToDate(_ path: String, inputPath: String) -> Bool {
            guard let made = files[path], FileStamp(path: path) == made else { return false }
            return FileStamp(path: inputPath)?.hasVersion(of: input) ?? false
        }
    }
}
