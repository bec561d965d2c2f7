import Foundation
import StandardProcessors
import Testing

@testable import PipelineKit

/// A pipeline file that is not UTF-8 is an error naming where: byte offset, line and column.
@Suite struct PipelineFileEncodingTests {
    @Test func aFileThatIsWholeUTF8IsRead() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write(
            Data(
                #"{"version": 1, "name": "ünïcødé 😀", "inputs": ["none/*.jpg"], "allowEmpty": true, "outputs": [{"name": "t", "steps": [], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}]}"#
                    .utf8), to: "ok.json")
        let pipeline = try Pipeline(contentsOf: URL(fileURLWithPath: file), processors: .standard)
        #expect(pipeline.definition.name == "ünïcødé 😀")
    }
}
