import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// A shard's manifest records the run that wrote it (its inputs, its settings, whether it
/// finished), and `merge-manifests` joins only those that together are what one run over every
/// input would write now.
@Suite struct ShardManifestRecordTests {
    static func file(widths: String, prefix: String) -> String {
        """
        {"version": 1, "name": "site", "inputs": ["in/*.jpg"], "manifest": {"path": "public/manifest.json", "urlPrefix": "\(prefix)"},
         "outputs": [{"name": "t", "widths": \(widths), "formats": ["jpeg"], "path": "public/{stem}-{width}.{format}"}]}
        """
    }

    func runShards(_ indices: [Int], of file: String) throws {
        for index in indices {
            let shard = try CommandRunner.run(["run", "--quiet", "--shard", "\(index)/2", file])
            #expect(shard.status == 0, "\(shard.standardError)")
        }
    }

    func expectRefusal(_ file: String, shard: Int, _ reason: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let refused = try CommandRunner.run(["merge-manifests", file])
        #expect(refused.status == 1, "\(refused.standardError)", sourceLocation: sourceLocation)
        #expect(
            refused.standardError.contains("manifest.shard-\(shard)-of-2.json is not what shard \(shard) makes now: \(reason)"),
            "\(refused.standardError)", sourceLocation: sourceLocation)
    }

    @Test func mergeManifestsRefusesAShardOfOtherInputsOrOtherSettingsWhateverTheFilesTimes() throws {
        // Given 8 photos whose 2 shards ran and were merged
        let (directory, file) = try ShardCommandTests.photos(8, file: Self.file(widths: "[16, 24]", prefix: "/img/"))
        try runShards([0, 1], of: file)
        #expect(try CommandRunner.run(["merge-manifests", file]).status == 0)
        let shardFile = directory.url.appendingPathComponent("public/manifest.shard-1-of-2.json")
        let record = try #require(try ImageManifest.read(from: shardFile).shard)
        #expect(record.index == 1 && record.count == 2 && record.finished)
        #expect(try ImageManifest.read(from: directory.url.appendingPathComponent("public/manifest.json")).shard == nil)

        // When a photo of shard 1 arrives with its time kept from long ago (`cp -p`, `rsync -a`),
        // and only shard 0 runs again
        let name = try #require((8..<40).map { "in/p\($0).jpg" }.first { Shard.shard(of: "file:" + $0, count: 2) == 1 })
        let path = try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 30, height: 20)), to: name)
        var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        try runShards([0], of: file)
        // Then the merge refuses shard 1's manifest, which has no entry for it
        try expectRefusal(file, shard: 1, "its run had other inputs than the shard has now")
        // and once shard 1 runs again, the merge has the photo
        try runShards([1], of: file)
        let merged = try CommandRunner.run(["merge-manifests", file])
        #expect(merged.status == 0, "\(merged.standardError)")
        #expect(try ImageManifest.read(from: directory.url.appendingPathComponent("public/manifest.json")).input(name) != nil)

        // When the file's widths and URL prefix change and only shard 0 runs with them
        try directory.write(Data(Self.file(widths: "[16, 20]", prefix: "/cdn/").utf8), to: "p.json")
        try runShards([0], of: file)
        // Then shard 1's manifest, of the old settings, is refused
        try expectRefusal(file, shard: 1, "its run had other settings than the pipeline file has now")
        // and a change that makes no entry other (the stage widths) is none
        try runShards([1], of: file)
        try directory.write(
            Data(
                Self.file(widths: "[16, 20]", prefix: "/cdn/").replacingOccurrences(
                    of: #""name": "site","#, with: #""name": "site", "inFlight": 3,"#
                ).utf8),
            to: "p.json")
        let again = try CommandRunner.run(["merge-manifests", file])
        #expect(again.status == 0, "\(again.standardError)")
    }

    /// Every shard out of date is named at once, a line each: a job runs them all again in one
    /// go, where it had to fail and run one shard again for each.
    @Test func everyShardOutOfDateIsNamedAtOnce() throws {
        // Given two shards run and merged, and then the file's widths changed
        let (directory, file) = try ShardCommandTests.photos(8, file: Self.file(widths: "[16, 24]", prefix: "/img/"))
        try runShards([0, 1], of: file)
        #expect(try CommandRunner.run(["merge-manifests", file]).status == 0)
        try directory.write(Data(Self.file(widths: "[16, 20]", prefix: "/img/").utf8), to: "p.json")

        // When they are merged, then both shards are named, each on a line of its own
        let refused = try CommandRunner.run(["merge-manifests", file])
        #expect(refused.status == 1, "\(refused.standardError)")
        let lines = refused.standardError.split(separator: "\n")
        #expect(lines.count == 2, "\(refused.standardError)")
        for (shard, line) in zip(0..., lines) {
            #expect(line.hasPrefix("error: ") && line.contains("manifest.shard-\(shard)-of-2.json is not what shard \(shard) makes now"))
            #expect(line.contains("run shard \(shard) of 2 again"), "\(line)")
        }
        #expect(lines.last?.hasSuffix("; nothing was written") == true, "\(refused.standardError)")
    }

    /// A source listed twice to two paths has two entries in its shard's manifest, as in one
    /// run's: the merge joins them, where it took them for one input in two shards.
    @Test func aSourceListedTwiceToTwoPathsMerges() throws {
        let directory = try TemporaryDirectory()
        for index in 0..<4 { try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)), to: "in/p\(index).jpg") }
        let file = try directory.write(
            Data(
                """
                {"version": 1, "name": "twice", "inputs": ["in/*.jpg", "*/p1.jpg"], "manifest": {"path": "public/manifest.json"},
                 "outputs": [{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{dir}/{stem}-t.jpg"}]}
                """.utf8), to: "twice.json")
        try runShards([0, 1], of: file)
        let merged = try CommandRunner.run(["merge-manifests", file])
        #expect(merged.status == 0, "\(merged.standardError)")
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("public/manifest.json"))
        #expect(manifest.inputs.filter { $0.source == "in/p1.jpg" }.count == 2, "\(manifest.inputs.map(\.source))")
    }
}
