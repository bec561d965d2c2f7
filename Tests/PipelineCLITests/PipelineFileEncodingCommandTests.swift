import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// A pipeline file that is not UTF-8, as `pipeline validate` prints it.
@Suite struct PipelineFileEncodingCommandTests {
    @Test func invalidUTF8NamesTheByteItsLineAndColumn() throws {
        // Given a file with a Latin-1 "é" (0xE9) on its third line, after a multi-byte character
        let directory = try TemporaryDirectory()
        var bytes = Data(#"{"version": 1,"#.utf8) + Data("\n".utf8)
        bytes += Data(#"  "inputs": ["in/*.jpg"],"#.utf8) + Data("\n".utf8)
        bytes += Data(#"  "name": "ü-caf"#.utf8) + Data([0xE9]) + Data(#"", "outputs": []}"#.utf8)
        let file = try directory.write(bytes, to: "latin1.json")
        // When it is loaded
        let error = try #require(throws: PipelineFileError.self) {
            try Pipeline(contentsOf: URL(fileURLWithPath: file), processors: .standard, displayName: "latin1.json")
        }
        // Then the problem names the byte's offset, line and column (in characters, as every position)
        let problem = try #require(error.problems.first)
        #expect(error.problems.count == 1)
        #expect(problem.location == SourceLocation(line: 3, column: 17))
        #expect(
            problem.message
                == "the file is not UTF-8 text: the byte 0xE9 at offset 58 (line 3, column 17) does not begin a valid UTF-8 character")
        // And the command line prints it as every other problem, exiting 2
        let result = try CommandRunner.run(["validate", file])
        #expect(result.status == 2)
        #expect(
            result.standardError.hasPrefix("\(file):3:17: error: the file is not UTF-8 text: the byte 0xE9 at offset 58"),
            "\(result.standardError)")
    }
}
