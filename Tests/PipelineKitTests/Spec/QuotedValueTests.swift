import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// A value the pipeline file quotes in a message is cut to a line's worth, however long it is.
@Suite struct QuotedValueTests {
    static let valid = PipelineFileTests.valid

    func problems(replacing old: String, with new: String) -> [PipelineFileError.Problem] {
        #expect(Self.valid.contains(old), "test setup: \(old) not in the valid file")
        do {
            _ = try PipelineDefinition(
                json: Self.valid.replacingOccurrences(of: old, with: new), baseDirectory: URL(fileURLWithPath: "/tmp"),
                processors: .standard)
            return []
        } catch {
            return error.problems
        }
    }

    /// Five million characters: what a message must not repeat.
    static let huge = String(repeating: "x", count: 5_000_000)

    @Test(arguments: [
        // A value of a choice the file checks, of a step's option, and of a format
        (#""fit": "cover""#, #""fit": "HUGE""#),
        (#""format": "webp""#, #""format": "HUGE""#),
        // A key of the file and a step's name
        (#""quality": 80"#, #""quality": 80, "HUGE": 1"#),
        (#"{"resize": "#, #"{"HUGE": "#),
        // A duplicate key
        (#""quality": 80"#, #""quality": 80, "HUGE": 1, "HUGE": 2"#),
        // A string where a number belongs
        (#""quality": 80"#, #""quality": "HUGE""#),
    ])
    func aHugeValueIsQuotedCutWithItsLength(old: String, new: String) {
        let problems = problems(replacing: old, with: new.replacingOccurrences(of: "HUGE", with: Self.huge))
        // Then the problem is found, and its message holds the value's start, not all of it
        let description = PipelineFileError(file: "p.json", problems: problems).description
        #expect(!problems.isEmpty)
        #expect(description.utf8.count < 2_000, "\(description.prefix(600))")
        #expect(description.contains(String(repeating: "x", count: 200) + "…"), "\(description.prefix(600))")
    }

    @Test func aShortValueIsQuotedWhole() {
        #expect("cover".quotedValue == #""cover""#)
        #expect(String(repeating: "é", count: 200).quotedValue == "\"" + String(repeating: "é", count: 200) + "\"")
        #expect(String(repeating: "é", count: 201).quotedValue == "\"" + String(repeating: "é", count: 200) + "…\" (201 characters)")
        let problems = problems(replacing: #""fit": "cover""#, with: #""fit": "covr""#)
        #expect(
            problems.map(\.message).contains {
                $0.hasPrefix(#"unknown value "covr": expected one of"#) && $0.contains("did you mean \"cover\"?")
            }, "\(problems)")
    }
}
