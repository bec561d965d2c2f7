import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// An output may not be named as the server's own paths are (`/healthz`, `/metrics`,
/// `/info/{input}`): its URLs would be answered by them; nor hold a `/`, which would make its
/// name two parts of a URL, nor be "." or ".." or hold control characters.
@Suite struct ReservedOutputNameTests {
    static func json(outputNames: [String]) -> String {
        let outputs = outputNames.map { name in
            #"{"name": "\#(name)", "encode": {"format": "webp"}, "path": "out/{stem}-\#(name).webp"}"#
        }
        return #"{"version": 1, "inputs": ["in/*.jpg"], "outputs": [\#(outputs.joined(separator: ", "))]}"#
    }

    func problems(_ json: String) -> [PipelineFileError.Problem] { PipelineHarness.problems(json) }

    @Test(arguments: ["info", "healthz", "metrics"])
    func theServersPathsAreNoOutputsName(_ name: String) throws {
        let found = problems(Self.json(outputNames: ["small", "large", name]))
        #expect(found.count == 1, "\(found)")
        let problem = try #require(found.first)
        #expect(problem.path == "outputs[2].name")
        #expect(problem.message.contains("\"\(name)\""), "\(problem)")
        #expect(problem.message.contains("/\(name)"), "\(problem)")
    }

    @Test func namesThatOnlyResembleThemAreOutputsNames() {
        #expect(problems(Self.json(outputNames: ["Info", "information", "metrics2", "health"])).isEmpty)
    }

    @Test(arguments: ["a/b", "..", ".", "a\\u0000b", "a\\nb"])
    func aNameThatCannotBeOnePartOfAPathIsRefusedAtItsName(_ name: String) throws {
        let found = problems(
            #"{"version": 1, "inputs": ["in/*.jpg"], "outputs": [{"name": "\#(name)", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}]}"#
        )
        #expect(found.count == 1, "\(found)")
        let problem = try #require(found.first)
        #expect(problem.path == "outputs[0].name")
        #expect(problem.message.contains("cannot be one part of a path"), "\(problem)")
    }
}
