import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// The glob settings as `pipeline validate` and `pipeline schema` state them.
@Suite struct GlobCommandTests {
    /// photos/a.jpg, photos/sub/b.png, photos/sub/deep/c.PNG, photos/D.JPG, photos/e.gif
    func photos() throws -> TemporaryDirectory {
        try Fixtures.globPhotos()
    }

    @Test func caseInsensitiveIsAPipelineSettingInTheSchemaAndValidate() throws {
        let directory = try photos()
        let json = PipelineHarness.json(
            inputs: ["photos/*.jpg"], outputs: [#"{"name": "t", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#],
            extra: #""caseInsensitive": true"#)
        let plan = try PipelineHarness.pipeline(json, in: directory).plan()
        #expect(plan.items.flatMap(\.listings).map(\.input.displayName) == ["photos/D.JPG", "photos/a.jpg"])

        try directory.write(
            Data(#"{"version": 1, "caseInsensitive": "yes", "inputs": ["photos/*.jpg"], "outputs": []}"#.utf8), to: "bad.json")
        let validate = try CommandRunner.run(["validate", directory.url.appendingPathComponent("bad.json").path])
        #expect(validate.status == 2 && validate.standardError.contains("caseInsensitive: expected a boolean"), "\(validate.standardError)")
        let schema = try CommandRunner.run(["schema"])
        #expect(schema.status == 0 && schema.standardOutput.contains(#""caseInsensitive""#))
    }
}
