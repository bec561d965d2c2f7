import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// Sharded runs of the command, `merge-reports` over their reports and `merge-manifests` over
/// their manifests.
@Suite struct ShardCommandTests {
    /// A folder of `count` distinct photos (`in/p0.jpg`…) and the pipeline `file` (`p.json`),
    /// with that file's absolute path.
    static func photos(_ count: Int, file: String) throws -> (directory: TemporaryDirectory, file: String) {
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48))
        for index in 0..<count { try directory.write(photo + Data("\(index)".utf8), to: "in/p\(index).jpg") }
        try directory.write(Data(file.utf8), to: "p.json")
        return (directory, directory.url.appendingPathComponent("p.json").path)
    }

    @Test func shardedRunsTogetherMakeWhatOneRunMakesAndMergeReportsCountsEachInputOnce() throws {
        // Given 24 photos, one of them listed twice (a glob and its own name: one input)
        let (directory, file) = try Self.photos(
            24,
            file: """
                {"version": 1, "inputs": ["in/*.jpg", "in/p7.jpg"], "outputs": [
                  {"name": "t", "steps": [{"resize": {"width": 16}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}]}
                """)

        // When four shards run, each with its report
        var outputs: [[String]] = []
        for index in 0..<4 {
            let before = Set(directory.allFiles().filter { $0.hasPrefix("out/") })
            let result = try CommandRunner.run([
                "run", "--quiet", "--shard", "\(index)/4", "--report", directory.url.appendingPathComponent("reports/\(index)").path, file,
            ])
            #expect(result.status == 0, "\(result.standardError)")
            outputs.append(Set(directory.allFiles().filter { $0.hasPrefix("out/") }).subtracting(before).sorted())
        }

        // Then every output was made by exactly one shard, all 24 together
        #expect(outputs.reduce(0) { $0 + $1.count } == 24)
        #expect(Set(outputs.flatMap { $0 }).count == 24)
        #expect(outputs.allSatisfy { !$0.isEmpty })

        // merge-reports accounts for every listing once, and names a missing shard
        let merged = directory.url.appendingPathComponent("merged").path
        let reports = (0..<4).map { directory.url.appendingPathComponent("reports/\($0)").path }
        let all = try CommandRunner.run(["merge-reports", "--output", merged] + reports)
        #expect(all.status == 0, "\(all.standardError)")
        let report = try ReportMerger.read(URL(fileURLWithPath: merged))
        #expect(report.inputs == 24 && report.succeeded == 24 && report.shard == nil)
        #expect(Set(report.items.map(\.input)).count == 24)
        #expect(report.missingShards == nil)
        let three = try CommandRunner.run(["merge-reports", "--output", merged + "-3"] + reports.dropLast())
        #expect(three.status == 1 && three.standardError.contains("missing shards: 3 of 4"))
        // and the report written says so itself, to whoever reads it without the exit status
        #expect(try ReportMerger.read(URL(fileURLWithPath: merged + "-3")).missingShards == [3])
        let page = try String(contentsOfFile: merged + "-3/index.html", encoding: .utf8)
        #expect(page.contains("Not the whole run: no report of shard 3 was merged."))
        let twice = try CommandRunner.run(["merge-reports", "--output", merged + "-x", reports[0], reports[0]])
        // naming the reports by their paths, not their places among the arguments
        #expect(
            twice.status == 2 && twice.standardError.contains("\(reports[0]) and \(reports[0]) are both of shard 0/4"),
            "\(twice.standardError)")
        let before = try Data(contentsOf: URL(fileURLWithPath: reports[0] + "/report.json"))
        let onto = try CommandRunner.run(["merge-reports", "--output", reports[0] + "/"] + reports)
        #expect(onto.status == 2 && onto.standardError.contains("holds the shard report"), "\(onto.standardError)")
        // and through a link to it too
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/to-shard", withDestinationPath: reports[0])
        let linked = try CommandRunner.run(["merge-reports", "--output", directory.path + "/to-shard"] + reports)
        #expect(linked.status == 2 && linked.standardError.contains("holds the shard report"), "\(linked.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: reports[0] + "/report.json")) == before)
        // A shard's folder whose report is not JSON, or has none, is named with the file
        try directory.write(Data("{\"inputs\": ".utf8), to: "cut/report.json")
        try FileManager.default.createDirectory(at: directory.url.appendingPathComponent("empty"), withIntermediateDirectories: true)
        for (folder, reason) in [("cut", "not JSON"), ("empty", "No such file or directory")] {
            let shard = directory.url.appendingPathComponent(folder).path
            let unread = try CommandRunner.run(["merge-reports", "--output", merged + "-" + folder, reports[0], shard])
            #expect(unread.status == 2, "\(unread.standardError)")
            #expect(unread.standardError == "error: cannot read the report \(shard)/report.json: \(reason)\n", "\(unread.standardError)")
        }

        // explain and validate say which shard and how many inputs fall in it
        let explain = try CommandRunner.run(["explain", file], environment: ["SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "4"])
        #expect(explain.standardOutput.contains("shard: 2/4 (Slurm: SLURM_ARRAY_TASK_ID=2"), "\(explain.standardOutput)")
        #expect(explain.standardOutput.contains("of 24 inputs"), "\(explain.standardOutput)")
    }

    @Test func mergeReportsFailsAsARunWouldWhenAShardHadFailuresOrWasStopped() throws {
        // Given two shards over 6 photos, one of which is cut short
        let (directory, file) = try Self.photos(
            6,
            file: """
                {"version": 1, "inputs": ["in/*.jpg"], "outputs": [
                  {"name": "t", "steps": [{"resize": {"width": 16}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}]}
                """)
        let photo = try Data(contentsOf: directory.url.appendingPathComponent("in/p0.jpg"))
        try directory.write(photo.prefix(photo.count / 3), to: "in/p0.jpg")
        let reports = (0..<2).map { directory.url.appendingPathComponent("reports/\($0)").path }
        let statuses = try (0..<2).map { index in
            try CommandRunner.run(["run", "--quiet", "--shard", "\(index)/2", "--report", reports[index], file]).status
        }
        #expect(statuses.sorted() == [0, 1])

        // When they are merged, then the status is a failed run's, naming why
        let merged = directory.url.appendingPathComponent("merged").path
        let failed = try CommandRunner.run(["merge-reports", "--output", merged] + reports)
        #expect(failed.status == 1)
        let lines = failed.standardError.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 && lines[1] == "1 input failed", "\(failed.standardError)")
        #expect(lines[0].hasPrefix("failed: in/p0.jpg: decompress: "), "\(failed.standardError)")
        #expect(failed.standardOutput.contains("5 succeeded, 1 failed"))
        #expect(FileManager.default.fileExists(atPath: merged + "/report.json"))

        // And a shard that was stopped (its report says so) fails the merge too
        let good = statuses.firstIndex(of: 0) ?? 0
        let report = reports[good] + "/report.json"
        var document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        document["cancelled"] = true
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: report))
        let stopped = try CommandRunner.run(["merge-reports", "--output", merged + "-2"] + reports)
        #expect(stopped.status == 1)
        #expect(stopped.standardError.contains("\nstopped before the end: shard \(good)\n"), "\(stopped.standardError)")

        // And of many failures, the first are named and the rest counted
        document["cancelled"] = false
        var items = try #require(document["items"] as? [[String: Any]])
        for index in 0..<25 {
            items.append([
                "input": "in/gone\(index).jpg", "status": "failed", "error": "gone", "stage": "fetch", "stageSeconds": [:], "outputs": [],
            ])
        }
        document["items"] = items
        document["inputs"] = items.count
        document["failed"] = 25
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: report))
        let many = try CommandRunner.run(["merge-reports", "--output", merged + "-3"] + reports)
        let named = many.standardError.split(separator: "\n").filter { $0.hasPrefix("failed: ") }
        // in the report page's order, numbers in names compared as numbers
        #expect(named == (0..<20).map { "failed: in/gone\($0).jpg: fetch: gone" }, "\(many.standardError)")
        #expect(
            many.standardError.contains("\n… and 6 more failures in \(merged)-3/report.json\n26 inputs failed\n"), "\(many.standardError)")
    }

    @Test func mergeReportsNamesWhichFileOfAnOutputOfSeveralFailed() throws {
        // Given a shard's report of an output of two widths and two formats whose crop fails
        // on every file
        let (directory, file) = try Self.photos(
            1,
            file: """
                {"version": 1, "inputs": ["in/*.jpg"], "outputs": [
                  {"name": "w", "widths": [10, 20], "formats": ["jpeg", "png"],
                   "steps": [{"crop": {"left": 0, "top": 0, "width": 65, "height": 10}}, {"resize": {}}],
                   "path": "out/{stem}-{width}.{format}"}]}
                """)
        let report = directory.url.appendingPathComponent("reports/0").path
        #expect(try CommandRunner.run(["run", "--quiet", "--shard", "0/1", "--report", report, file]).status == 1)

        // When it is merged, then each file's failure is named apart, as the run named them
        let merged = try CommandRunner.run(["merge-reports", "--output", directory.path + "/merged", report])
        let named = merged.standardError.split(separator: "\n").filter { $0.hasPrefix("failed: ") }.map(String.init)
        #expect(named.count == 4 && Set(named).count == 4, "\(merged.standardError)")
        for width in [10, 20] {
            for format in ["jpeg", "png"] {
                #expect(named.contains { $0.hasPrefix("failed: in/p0.jpg → w (\(width) px, \(format)): process: ") }, "\(named)")
            }
        }
        // and the report records it, with the file's own format
        let outputs = try ReportMerger.read(URL(fileURLWithPath: report)).items.first?.outputs ?? []
        #expect(Set(outputs.compactMap(\.file)) == ["10 px, jpeg", "10 px, png", "20 px, jpeg", "20 px, png"], "\(outputs)")
        #expect(outputs.allSatisfy { $0.file?.hasSuffix($0.format) == true })
    }

    @Test func mergeManifestsWritesTheManifestOneRunOverEveryInputWrites() throws {
        // Given 12 photos and a file with a manifest, whose one run over every input wrote it
        let (directory, file) = try Self.photos(
            12,
            file: """
                {"version": 1, "name": "site", "inputs": ["in/*.jpg"],
                 "manifest": {"path": "public/manifest.json", "urlPrefix": "/img"},
                 "outputs": [{"name": "t", "widths": [16, 32], "formats": ["webp", "jpeg"], "placeholders": ["lqip"],
                              "path": "public/{stem}-{width}.{format}"}]}
                """)
        let manifest = directory.url.appendingPathComponent("public/manifest.json")
        let whole = try CommandRunner.run(["run", "--quiet", file])
        #expect(whole.status == 0, "\(whole.standardError)")
        let written = try Data(contentsOf: manifest)
        try FileManager.default.removeItem(at: manifest)

        // When three shards run, each writing its own manifest beside it
        for index in 0..<3 {
            let shard = try CommandRunner.run(["run", "--quiet", "--force", "--shard", "\(index)/3", file])
            #expect(shard.status == 0, "\(shard.standardError)")
        }
        #expect(!FileManager.default.fileExists(atPath: manifest.path))
        // one missing shard writes nothing
        let third = directory.url.appendingPathComponent("public/manifest.shard-2-of-3.json")
        try FileManager.default.moveItem(at: third, to: directory.url.appendingPathComponent("aside.json"))
        let missing = try CommandRunner.run(["merge-manifests", file])
        #expect(missing.status == 1, "\(missing.standardError)")
        #expect(missing.standardError.contains("missing shards: 2 of 3; nothing was written"), "\(missing.standardError)")
        #expect(!FileManager.default.fileExists(atPath: manifest.path))
        try FileManager.default.moveItem(at: directory.url.appendingPathComponent("aside.json"), to: third)

        // Then merge-manifests writes the very bytes the one run wrote
        let merged = try CommandRunner.run(["merge-manifests", file])
        #expect(merged.status == 0, "\(merged.standardError)")
        #expect(merged.standardOutput.hasPrefix("merged the manifests of 3 shards: 12 inputs → "), "\(merged.standardOutput)")
        #expect(try Data(contentsOf: manifest) == written)

        // and refuses an input in two shards' manifests, and the manifests of two runs with other shard counts
        let first = directory.url.appendingPathComponent("public/manifest.shard-0-of-3.json")
        let second = directory.url.appendingPathComponent("public/manifest.shard-1-of-3.json")
        try FileManager.default.removeItem(at: second)
        try FileManager.default.copyItem(at: first, to: second)
        let twice = try CommandRunner.run(["merge-manifests", file])
        #expect(twice.status == 2, "\(twice.standardError)")
        #expect(
            twice.standardError.contains("is in both manifest.shard-0-of-3.json and manifest.shard-1-of-3.json"), "\(twice.standardError)")
        #expect(try Data(contentsOf: manifest) == written)
        try directory.write(try Data(contentsOf: first), to: "public/manifest.shard-0-of-2.json")
        let counts = try CommandRunner.run(["merge-manifests", file])
        #expect(counts.status == 2, "\(counts.standardError)")
        #expect(
            counts.standardError.contains("are of runs of 2, 3 shards (2: manifest.shard-0-of-2.json; 3: manifest.shard-0-of-3.json, "),
            "\(counts.standardError)")
        // and a file named as a shard the run had not
        try FileManager.default.removeItem(at: directory.url.appendingPathComponent("public/manifest.shard-0-of-2.json"))
        try directory.write(try Data(contentsOf: first), to: "public/manifest.shard-3-of-3.json")
        let stray = try CommandRunner.run(["merge-manifests", file])
        #expect(stray.status == 2, "\(stray.standardError)")
        #expect(
            stray.standardError.contains("manifest.shard-3-of-3.json names no shard of 3 (0 to 2): remove it"), "\(stray.standardError)")
    }

    @Test func mergeManifestsRefusesAShardManifestLeftFromAnEarlierBatch() throws {
        // Given 12 photos whose 3 shards ran, and were merged
        let (directory, file) = try Self.photos(
            12,
            file: """
                {"version": 1, "name": "site", "inputs": ["in/*.jpg"], "manifest": {"path": "public/manifest.json"},
                 "outputs": [{"name": "t", "widths": [16], "formats": ["jpeg"], "path": "public/{stem}-{width}.{format}"}]}
                """)
        func runShards(_ indices: [Int]) throws {
            for index in indices {
                let shard = try CommandRunner.run(["run", "--quiet", "--shard", "\(index)/3", file])
                #expect(shard.status == 0, "\(shard.standardError)")
            }
        }
        try runShards([0, 1, 2])
        #expect(try CommandRunner.run(["merge-manifests", file]).status == 0)
        let manifest = directory.url.appendingPathComponent("public/manifest.json")
        let merged = try Data(contentsOf: manifest)
        let third = (0..<12).map { "in/p\($0).jpg" }.filter { Shard.shard(of: "file:" + $0, count: 3) == 2 }
        try #require(third.count >= 2)
        func expectRefusal(_ reason: String) throws {
            let refused = try CommandRunner.run(["merge-manifests", file])
            #expect(refused.status == 1, "\(refused.standardError)")
            #expect(
                refused.standardError.contains("manifest.shard-2-of-3.json is not what shard 2 makes now: \(reason); "),
                "\(refused.standardError)")
            #expect(refused.standardError.contains("run shard 2 of 3 again; nothing was written"), "\(refused.standardError)")
            #expect(try Data(contentsOf: manifest) == merged)
        }

        // When one of shard 2's inputs is written again and only shards 0 and 1 run
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 40)), to: third[1])
        try runShards([0, 1])
        // Then merge-manifests writes nothing, naming the input and the shard
        try expectRefusal("\(third[1]) changed after it was written")
        // and so when one of its inputs is gone
        try FileManager.default.removeItem(atPath: directory.path + "/" + third[0])
        try expectRefusal("it lists \(third[0]), no longer an input")

        // When shard 2 runs too, the manifests join, with the new input's size
        try runShards([2])
        let after = try CommandRunner.run(["merge-manifests", file])
        #expect(after.status == 0, "\(after.standardError)")
        #expect(after.standardOutput.hasPrefix("merged the manifests of 3 shards: 11 inputs → "), "\(after.standardOutput)")
        let joined = try ImageManifest.read(from: manifest)
        #expect(joined.input(third[1])?.width == 40)
        #expect(joined.input(third[0]) == nil)

        // When one is replaced as rsync -a does it: another file, its time from long ago, renamed over it
        let rejoined = try Data(contentsOf: manifest)
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 30, height: 30)), to: "in/replacement.tmp")
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: 1_600_000_000)], ofItemAtPath: directory.path + "/in/replacement.tmp")
        #expect(rename(directory.path + "/in/replacement.tmp", directory.path + "/" + third[1]) == 0)
        // Then merge-manifests sees it too
        let replaced = try CommandRunner.run(["merge-manifests", file])
        #expect(replaced.status == 1, "\(replaced.standardError)")
        #expect(replaced.standardError.contains("an input of it has changed since its run"), "\(replaced.standardError)")
        #expect(try Data(contentsOf: manifest) == rejoined)
        // And a change of its permissions alone, or a new link to it, is none
        try runShards([2])
        #expect(try CommandRunner.run(["merge-manifests", file]).status == 0)
        #expect(chmod(directory.path + "/" + third[1], 0o600) == 0)
        #expect(link(directory.path + "/" + third[1], directory.path + "/in/linked.tmp") == 0)
        let unchanged = try CommandRunner.run(["merge-manifests", file])
        #expect(unchanged.status == 0, "\(unchanged.standardError)")

        // When a file shard 2's manifest lists is removed, or written over, the merge refuses it
        let stem = ((third[1] as NSString).lastPathComponent as NSString).deletingPathExtension
        let made = directory.path + "/public/\(stem)-16.jpg"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: made))
        try FileManager.default.removeItem(atPath: made)
        let gone = try CommandRunner.run(["merge-manifests", file])
        #expect(gone.status == 1, "\(gone.standardError)")
        #expect(
            gone.standardError.contains("not what shard 2 makes now: it lists \(stem)-16.jpg, which is not there; run shard 2"),
            "\(gone.standardError)")
        try directory.write(Data("not a jpeg".utf8), to: "public/\(stem)-16.jpg")
        let over = try CommandRunner.run(["merge-manifests", file])
        #expect(over.status == 1, "\(over.standardError)")
        #expect(
            over.standardError.contains("it lists \(stem)-16.jpg of \(bytes.count) bytes, which has 10 now"), "\(over.standardError)")
    }

    @Test func mergeManifestsFindsFilesAsTheRunNamedThemAndChecksPyramids() throws {
        // Given shards whose manifest's folder is a link elsewhere (its files named with `..` from
        // the link's path), with a set of images and a tile pyramid
        let (directory, file) = try Self.photos(
            4,
            file: """
                {"version": 1, "name": "site", "inputs": ["in/*.jpg"],
                 "manifest": {"path": "data/images.json", "urlPrefix": "/img/", "urlRoot": "public/img"},
                 "outputs": [{"name": "t", "widths": [16], "formats": ["webp"], "path": "public/img/{stem}-{width}.{format}"},
                             {"name": "zoom", "tiles": {"layout": "dz"}, "path": "public/img/{stem}.dzi"}]}
                """)
        try FileManager.default.createDirectory(at: directory.url.appendingPathComponent("shared/data"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/data", withDestinationPath: "shared/data")
        for index in 0..<2 {
            let shard = try CommandRunner.run(["run", "--quiet", "--shard", "\(index)/2", file])
            #expect(shard.status == 0, "\(shard.standardError)")
        }
        // When the manifests are merged, then every file listed is found where the run wrote it
        let merged = try CommandRunner.run(["merge-manifests", file])
        #expect(merged.status == 0, "\(merged.standardError)")
        // and when a pyramid's tiles are removed, the merge refuses its shard's manifest
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("data/images.shard-0-of-2.json"))
        let tiles = try #require(manifest.inputs.first?.outputs["zoom"]?.tiles)
        let dzi = directory.url.appendingPathComponent("data").appendingPathComponent(tiles.path).standardized.path
        try #require(dzi.hasSuffix(".dzi") && FileManager.default.fileExists(atPath: dzi))
        try FileManager.default.removeItem(atPath: String(dzi.dropLast(4)) + "_files")
        let refused = try CommandRunner.run(["merge-manifests", file])
        #expect(refused.status == 1, "\(refused.standardError)")
        #expect(refused.standardError.contains("_files, which is not there; run shard 0 of 2 again"), "\(refused.standardError)")
    }

    @Test func mergeReportsPreviewsAnAllowedSVGFromItsOutputNotWithTheSVGLoader() throws {
        // Given a run that allows SVG, with its report
        let directory = try TemporaryDirectory()
        try directory.write(
            Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="red"/></svg>"#.utf8),
            to: "in/logo.svg")
        try directory.write(
            Data(
                """
                {"version": 1, "inputs": ["in/*.svg"], "decompress": {"allowUntrusted": ["svg"]}, "outputs": [
                  {"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}]}
                """.utf8), to: "p.json")
        let report = directory.url.appendingPathComponent("report").path
        let run = try CommandRunner.run([
            "run", "--quiet", "--shard", "0/1", "--report", report, directory.url.appendingPathComponent("p.json").path,
        ])
        #expect(run.status == 0, "\(run.standardError)")

        // When the report is merged, in a process that allows nothing
        let merged = directory.url.appendingPathComponent("merged").path
        let result = try CommandRunner.run(["merge-reports", "--output", merged, "--input-directory", directory.path, report])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.hasPrefix("merged 1 of 1 shard: 1 input, 1 succeeded, 0 failed, 0 not run; 1 output written,"))

        // Then the input's preview is its output's: the SVG itself is not read with librsvg,
        // which libvips keeps for trusted files
        let html = try String(contentsOfFile: merged + "/index.html", encoding: .utf8)
        #expect(html.contains("preview from t"), "\(html.count) characters")
        #expect(html.contains("data:image/jpeg;base64,"))
    }
}
