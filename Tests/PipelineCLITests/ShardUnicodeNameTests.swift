import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// Names that differ only in their Unicode form (é as one character, or as e and a combining
/// accent, as a Mac writes it) are two files on Linux, two keys in a bucket and two inputs of a
/// run. Swift's strings take them for one, and the merges did: a batch split across shards could
/// never be joined.
@Suite struct ShardUnicodeNameTests {
    @Test func twoInputsWhoseNamesDifferOnlyInTheirUnicodeFormAreMergedAsTwo() throws {
        // Given two photos named é.jpg, one composed and one decomposed
        let composed = "in/\u{E9}.jpg"
        let decomposed = "in/e\u{301}.jpg"
        let directory = try TemporaryDirectory()
        for (index, name) in [composed, decomposed].enumerated() {
            try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64 + index, height: 48)), to: name)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/in").count == 2)
        let file = try directory.write(
            Data(
                #"""
                {"version": 1, "name": "site", "inputs": ["in/*.jpg"], "manifest": {"path": "public/manifest.json"},
                 "outputs": [{"name": "t", "encode": {"format": "png"}, "path": "public/{stem}-{hash:8}.png"}]}
                """#.utf8), to: "p.json")
        // and a shard count that puts them in different shards
        let count = try #require(
            (2...16).first { Shard.shard(of: "file:" + composed, count: $0) != Shard.shard(of: "file:" + decomposed, count: $0) })

        // When every shard runs, each with its report
        for index in 0..<count {
            let report = directory.path + "/reports/\(index)"
            let shard = try CommandRunner.run(["run", "--quiet", "--shard", "\(index)/\(count)", "--report", report, file])
            #expect(shard.status == 0, "\(shard.standardError)")
        }

        // Then both merges join them as the two inputs they are
        let reports = try CommandRunner.run(
            ["merge-reports", "--output", directory.path + "/merged"] + (0..<count).map { directory.path + "/reports/\($0)" })
        #expect(reports.status == 0, "\(reports.standardError)")
        let manifests = try CommandRunner.run(["merge-manifests", file])
        #expect(manifests.status == 0, "\(manifests.standardError)")
        #expect(manifests.standardOutput.hasPrefix("merged the manifests of \(count) shards: 2 inputs → "), "\(manifests.standardOutput)")
        let merged = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.url.appendingPathComponent("public/manifest.json")))
        #expect((merged as? [String: Any])?["inputs"].map { ($0 as? [Any])?.count } == 2, "\(merged)")
    }
}
