import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips

/// A quality target as a user meets it on the command line: the choice in `--json` events and
/// the manifest, the search in `explain`'s plan, and the search's memory in admission.
@Suite struct QualityTargetCommandTests {
    static let photo = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/samples/storm.jpg")

    /// One photograph, and a pipeline with a targeted WebP and a fixed-quality JPEG of it.
    func prepare(manifest: Bool = false) throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory()
        try directory.write(try Data(contentsOf: Self.photo), to: "in/storm.jpg")
        let file = try directory.write(
            Data(
                """
                {"version": 1, "name": "site", "inputs": ["in/*.jpg"],
                 \(manifest ? #""manifest": {"path": "out/manifest.json", "urlPrefix": "/img/"},"# : "")
                 "outputs": [
                   {"name": "searched", "steps": [{"resize": {"width": 400}}],
                    "encode": {"format": "webp", "quality": {"ssimulacra2": 70, "min": 20, "max": 95}}, "path": "out/{stem}.webp"},
                   {"name": "fixed", "steps": [{"resize": {"width": 200}}], "encode": {"format": "jpeg", "quality": 80}, "path": "out/{stem}.jpg"}]}
                """.utf8), to: "p.json")
        return (directory, file)
    }

    /// `--json`'s itemCompleted event carries the quality chosen and its score for the
    /// targeted output, and neither for the fixed one; the manifest's entry carries the same.
    @Test func theJSONEventsAndTheManifestCarryTheChoice() throws {
        let (directory, file) = try prepare(manifest: true)
        let result = try CommandRunner.run(["run", "--json", file])
        #expect(result.status == 0, "\(result.standardError)")
        let events = result.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let completed = try #require(events.first { $0["event"] as? String == "itemCompleted" })
        let outputs = try #require(completed["outputs"] as? [[String: Any]])
        let searched = try #require(outputs.first { $0["name"] as? String == "searched" })
        let fixed = try #require(outputs.first { $0["name"] as? String == "fixed" })
        let quality = try #require(searched["quality"] as? Int)
        let score = try #require(searched["ssimulacra2"] as? Double)
        #expect((20...95).contains(quality) && score >= 70, "quality \(quality), score \(score)")
        #expect(fixed["quality"] == nil && fixed["ssimulacra2"] == nil, "\(fixed)")

        // The manifest's entry holds the same choice; the fixed output's holds none.
        let manifest = try ImageManifest.read(from: directory.url.appendingPathComponent("out/manifest.json"))
        let input = try #require(manifest.input("in/storm.jpg"))
        let searchedFile = try #require(input.outputs["searched"]?.formats.first?.files.first)
        #expect(searchedFile.quality == quality && searchedFile.ssimulacra2 == score)
        let fixedFile = try #require(input.outputs["fixed"]?.formats.first?.files.first)
        #expect(fixedFile.quality == nil && fixedFile.ssimulacra2 == nil)
    }

    /// `explain` names the search in the targeted output's plan line, and not in the fixed one's.
    @Test func theSummaryAndVerboseLinesShowTheQualitiesChosen() throws {
        let (directory, file) = try prepare()
        let result = try CommandRunner.run(["run", "--verbose", file])
        defer { withExtendedLifetime(directory) {} }
        #expect(result.status == 0, "\(result.standardError)")
        // -v: the searched file's line gives its quality and score; the fixed one's gives neither
        let searched = try #require(result.standardOutput.split(separator: "\n").first { $0.contains("storm.webp") })
        let quality = try #require(searched.firstMatch(of: /quality (\d+) for SSIMULACRA 2 [0-9.]+\)/)?.output.1)
        #expect(!(result.standardOutput.split(separator: "\n").first { $0.contains("storm.jpg") } ?? "").contains("quality"))
        // The summary ends with the qualities chosen, per format
        #expect(result.standardOutput.contains("qualities chosen: webp \(quality) (1 file)"), "\(result.standardOutput)")
    }

    /// A target no allowed quality reaches is told in `report.json`, with the target beside the
    /// score and the warning the run printed, and on the report's page.
    @Test func theReportTellsAFileShortOfItsTarget() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Data(contentsOf: Self.photo), to: "in/storm.jpg")
        let file = try directory.write(
            Data(
                """
                {"version": 1, "inputs": ["in/*.jpg"], "outputs": [
                  {"name": "short", "steps": [{"resize": {"width": 300}}],
                   "encode": {"format": "jpeg", "quality": {"ssimulacra2": 99, "max": 40}}, "path": "out/{stem}.jpg"}]}
                """.utf8), to: "p.json")
        let result = try CommandRunner.run(["run", "--quiet", "--report", directory.path + "/report", file])
        #expect(result.status == 0, "\(result.standardError)")
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let report = try decoder.decode(RunReport.self, from: Data(contentsOf: directory.url.appendingPathComponent("report/report.json")))
        let output = try #require(report.items.first?.outputs.first)
        let score = try #require(output.ssimulacra2)
        #expect(output.quality == 40 && output.ssimulacra2Target == 99 && score < 99, "\(output)")
        let warnings = try #require(output.warnings, "\(output)")
        #expect(warnings.contains { $0.contains("short of the target 99") && $0.contains("storm.jpg") }, "\(warnings)")
        let page = try String(contentsOf: directory.url.appendingPathComponent("report/index.html"), encoding: .utf8)
        #expect(page.contains("short of the target 99</span>"), "\(page)")
        // and again when a later run finds the file up to date: it is as short as when made
        let again = try CommandRunner.run(["run", "--quiet", "--report", directory.path + "/report", file])
        #expect(again.status == 0 && again.standardError.contains("short of the target 99"), "\(again.standardError)")
        let later = try decoder.decode(RunReport.self, from: Data(contentsOf: directory.url.appendingPathComponent("report/report.json")))
        let kept = try #require(later.items.first?.outputs.first)
        #expect(kept.upToDate == true && kept.warnings == warnings, "\(kept)")
    }

    /// Converted to standard output, a file short of its target is named as the image sent, not
    /// as the file made for it, which the user never sees.
    @Test func aConversionToStandardOutputShortOfItsTargetNamesTheImageSent() throws {
        let result = try CommandRunner.run(
            ["convert", "-", "-", "--format", "jpeg", "--ssimulacra2", "99", "--width", "300"],
            standardInput: try Data(contentsOf: Self.photo))
        #expect(result.status == 0, "\(result.standardError)")
        #expect(
            result.standardError.contains("short of the target 99; the image written to standard output is the best"),
            "\(result.standardError)")
    }

    @Test func explainSaysTheOutputSearchesQuality() throws {
        let (directory, file) = try prepare()
        let result = try withExtendedLifetime(directory) { try CommandRunner.run(["explain", file]) }
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        let searched = try #require(lines.first { $0.contains("searched:") }, "\(result.standardOutput)")
        #expect(searched.contains("webp (") && searched.contains("searches quality for SSIMULACRA2 70 within 20-95"), "\(searched)")
        let fixed = try #require(lines.first { $0.contains("fixed:") }, "\(result.standardOutput)")
        #expect(!fixed.contains("searches quality"), "\(fixed)")
    }

    /// Admission by memory counts what a search holds beside the encoder (the original's
    /// pyramids and one candidate's planes): a 2000×1500 image that a fixed-quality JPEG makes
    /// well within a 300 MB budget is, with a target, more than the whole budget, and fails as such.
    @Test func admissionCountsTheSearch() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.solid(width: 2000, height: 1500)), to: "in/flat.png")
        for (name, quality) in [("fixed", "80"), ("searched", #"{"ssimulacra2": 75}"#)] {
            try directory.write(
                Data(
                    """
                    {"version": 1, "inputs": ["in/*.png"], "outputs": [
                      {"name": "full", "encode": {"format": "jpeg", "quality": \(quality)}, "path": "\(name)/{stem}.jpg"}]}
                    """.utf8), to: "\(name).json")
        }
        let fixed = try CommandRunner.run(["run", "--quiet", "--max-memory", "300MB", directory.path + "/fixed.json"])
        #expect(fixed.status == 0, "\(fixed.standardError)")
        #expect(directory.allFiles().contains("fixed/flat.jpg"))

        let searched = try CommandRunner.run(["run", "--json", "--max-memory", "300MB", directory.path + "/searched.json"])
        #expect(searched.status == 1, "\(searched.standardError)")
        let failed = searched.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.first { $0["event"] as? String == "itemFailed" }
        #expect(failed?["kind"] as? String == "overMemoryBudget", "\(searched.standardOutput)")
        #expect(!directory.allFiles().contains("searched/flat.jpg"))
    }
}
