import Foundation

extension RunReport {
    /// One failure a report records: of a whole input, or of one of its outputs. What the
    /// report page's table and `merge-reports` list.
    package struct Failure: Sendable, CustomStringConvertible {
        /// The input's display name.
        package let input: String
        /// The output that failed, or nil when the whole input failed.
        package let output: String?
        /// Which of the output's files failed, when it makes several (`320 px, avif`).
        package let file: String?
        /// The stage that failed, when recorded.
        package let stage: Stage?
        /// The processor step that failed, when it was one.
        package let step: ItemError.Step?
        /// Why it failed, in words.
        package let reason: String

        /// The output, and its file when it makes several: `OUTPUT (320 px, avif)`.
        package var outputFile: String? {
            output.map { $0 + (file.map { " (\($0))" } ?? "") }
        }

        /// `INPUT → OUTPUT (FILE): STAGE: steps[N].NAME: REASON`, as a run prints a failure.
        package var description: String {
            let what = outputFile.map { "\(input) → \($0)" } ?? input
            return "\(what): \(stage.map { "\($0.rawValue): " } ?? "")\(step.map { "\($0): " } ?? "")\(reason)"
        }
    }
}

extension RunReport {
    /// The order of inputs in a report, its page and a merge: numbers in names compared as
    /// numbers (`photo-2` before `photo-10`), case ignored; names equal so (`a.png`, `A.png`;
    /// `photo-1`, `photo-01`) by their bytes, so that one set of items has one order.
    package static func inputPrecedes(_ left: String, _ right: String) -> Bool {
        switch left.compare(right, options: [.numeric, .caseInsensitive]) {
        case .orderedAscending: true
        case .orderedDescending: false
        case .orderedSame: left < right
        }
    }
}

extension RunReport.Item {
    /// What failed of this input: the input as a whole, or each output that failed; none when
    /// it succeeded or was not run.
    package var failures: [RunReport.Failure] {
        guard status == .failed else { return [] }
        if let error { return [RunReport.Failure(input: input, output: nil, file: nil, stage: stage, step: nil, reason: error)] }
        return outputs.filter { $0.status == .failed }.map { output in
            RunReport.Failure(
                input: input, output: output.name, file: output.file, stage: output.stage, step: output.step,
                reason: output.error ?? "unknown reason")
        }
    }
}
