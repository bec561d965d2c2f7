import Foundation
import TestSupport
import Testing

/// The pipeline files in `Pipelines/`, which the docs point new users to: each one validates (an
/// S3 example up to listing its bucket, which needs credentials and a bucket a test has not).
@Suite struct ExamplePipelinesCommandTests {
    static var examples: [String] {
        let folder = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        // Pipeline files, not the data files beside them (a focus points file).
        return names.filter { name in
            guard name.hasSuffix(".json"), let data = FileManager.default.contents(atPath: folder.path + "/" + name),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { return false }
            return object["outputs"] != nil
        }.sorted()
    }

    @Test func thereAreExamples() {
        #expect(Self.examples.contains("thumbnails.json") && Self.examples.contains("art-direction.json"))
        #expect(!Self.examples.contains("focus-points.json"))
    }

    @Test(arguments: examples)
    func eachExampleValidates(name: String) throws {
        let path = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/" + name).path
        let result = try CommandRunner.run(["validate", path])
        if name.hasPrefix("s3-") {
            #expect(result.status == 0 || result.standardError.contains("cannot list s3://"), "\(name): \(result.standardError)")
        } else {
            #expect(result.status == 0, "\(name): \(result.standardError)")
        }
    }
}
