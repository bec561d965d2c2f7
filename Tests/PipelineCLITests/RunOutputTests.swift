import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips

/// What `pipeline run` tells people and scripts: JSON events, traces, report.json, logs.
@Suite(.serialized) struct RunOutputTests {
    /// Three good photos and a broken one, two outputs each.
    func makePipeline(_ directory: TemporaryDirectory) throws -> String {
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 400, height: 300))
        for index in 0..<3 { try directory.write(photo, to: "in/photo-\(index).jpg") }
        try directory.write(Data("not a photo".utf8), to: "in/broken.jpg")
        let json = """
            {"version": 1, "inputs": ["in/*.jpg"],
             "outputs": [
               {"name": "small", "steps": [{"resize": {"width": 100}}], "encode": {"format": "webp"}, "path": "out/{stem}-small.webp"},
               {"name": "large", "steps": [{"resize": {"width": 200}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-large.jpg"}
             ]}
            """
        return try directory.write(Data(json.utf8), to: "pipeline.json")
    }

    func objects(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
        }
    }

    @Test func jsonPrintsOneEventPerLineInOrder() throws {
        let directory = try TemporaryDirectory()
        let result = try CommandRunner.run(["run", "--json", try makePipeline(directory)])
        #expect(result.status == 1)
        let events = try objects(result.standardOutput)
        let kinds = events.compactMap { $0["event"] as? String }
        #expect(kinds.first == "runStarted")
        #expect(kinds.last == "runFinished")
        #expect(kinds.filter { $0 == "itemStarted" }.count == 4)
        #expect(kinds.filter { $0 == "itemCompleted" }.count == 4)
        // Per good input: fetch, decompress, and resize + encode for each of two outputs;
        // the broken one stops after fetch and decompress.
        let operations = events.filter { $0["event"] as? String == "stageFinished" }
        let goodOperations = 3 * 6, brokenOperations = 2
        #expect(operations.count == goodOperations + brokenOperations)
        #expect(operations.filter { $0["stage"] as? String == "encode" }.count == 6)
        let failed = try #require(events.first { $0["event"] as? String == "itemFailed" })
        #expect(failed["input"] as? String == "in/broken.jpg")
        #expect(failed["stage"] as? String == "decompress")
        #expect((failed["reason"] as? String)?.contains("not an image") == true)
        #expect(events.last?["succeeded"] as? Int == 3)
        #expect(result.standardError.contains("failed: in/broken.jpg: decompress"))
    }

    @Test func everyJSONLineIsValidAgainstTheEventsSchema() throws {
        // Given a run with a failure, a quality target and a memory limit, so optional fields appear
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 400, height: 300))
        try directory.write(photo, to: "in/photo.jpg")
        try directory.write(Data("not a photo".utf8), to: "in/broken.jpg")
        let json = """
            {"version": 1, "inputs": ["in/*.jpg"],
             "outputs": [{"name": "small", "steps": [{"resize": {"width": 100}}],
                          "encode": {"format": "webp", "quality": {"ssimulacra2": 70}}, "path": "out/{stem}.webp"}]}
            """
        let pipeline = try directory.write(Data(json.utf8), to: "pipeline.json")
        let result = try CommandRunner.run(["run", "--json", "--max-memory", "2GB", "--shard", "0/1", pipeline])
        #expect(result.status == 1)
        // When each line is checked against `pipeline schema --events` by an independent validator
        let schema = try CommandRunner.run(["schema", "--events"])
        #expect(schema.status == 0)
        let schemaPath = try directory.write(Data(schema.standardOutput.utf8), to: "events.schema.json")
        let lines = result.standardOutput.split(separator: "\n")
        let documents = try lines.enumerated().map { index, line in try directory.write(Data(line.utf8), to: "line-\(index).json") }
        let counts = try SchemaValidator.errorCounts(schema: schemaPath, documents: documents)
        // Then every kind appeared and none has an error
        let kinds = Set(try objects(result.standardOutput).compactMap { $0["event"] as? String })
        #expect(kinds.isSuperset(of: ["runStarted", "itemStarted", "stageFinished", "itemFailed", "itemCompleted", "runFinished"]))
        #expect(counts.count == lines.count)
        for (line, count) in zip(lines, counts) { #expect(count == 0, "invalid against the schema: \(line)") }
        #expect(result.standardOutput.contains(#""quality":"#) && result.standardOutput.contains(#""memory":"#))
        // and the shard is named where the run starts, for a scheduler's log of every task's lines
        #expect(try objects(result.standardOutput).first?["shard"] as? [String: Int] == ["index": 0, "count": 1])
    }

    @Test func aReportThatCannotBeKeptStopsTheRunBeforeItStarts() throws {
        // Given a folder for temporary files that does not exist
        let directory = try TemporaryDirectory()
        let pipeline = try makePipeline(directory)
        let missing = directory.path + "/no such folder"
        // When a run is asked for a report
        let result = try CommandRunner.run(["run", "--report", directory.path + "/report", pipeline], environment: ["TMPDIR": missing])
        // Then it stops at once, saying where the report's items could not be kept, and makes nothing
        #expect(result.status == 1)
        #expect(
            result.standardError.contains("cannot write the report: \(missing): no file can be made there to keep the report's items in"),
            "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/report"))
    }

    @Test func aPlanThatCannotBeKeptStopsTheRunNamingTheFolder() throws {
        // Given a folder for temporary files that does not exist
        let directory = try TemporaryDirectory()
        let pipeline = try makePipeline(directory)
        let missing = directory.path + "/no such folder"
        // When a run is asked for
        let result = try CommandRunner.run(["run", pipeline], environment: ["TMPDIR": missing])
        // Then it stops before any work, naming the folder the plan of its inputs goes to, and
        // fails (1): the machine is at fault, not the file (2)
        #expect(result.status == 1)
        #expect(
            result.standardError.contains("the plan of the inputs cannot be kept in the folder for temporary files (\(missing)"),
            "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
        // And so does validate, which plans the same
        let validated = try CommandRunner.run(["validate", pipeline], environment: ["TMPDIR": missing])
        #expect(validated.status == 1, "\(validated.standardError)")
    }

    @Test func traceHasOneSlicePerStageOperationOnNamedTracks() throws {
        let directory = try TemporaryDirectory()
        let tracePath = directory.path + "/trace.json"
        let result = try CommandRunner.run(["run", "--json", "--trace", tracePath, try makePipeline(directory)])
        let operations = try objects(result.standardOutput).filter { $0["event"] as? String == "stageFinished" }
        let trace = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: tracePath))) as? [String: Any])
        let events = try #require(trace["traceEvents"] as? [[String: Any]])
        let slices = events.filter { $0["ph"] as? String == "X" }
        #expect(slices.count == operations.count)
        #expect(slices.allSatisfy { ($0["dur"] as? Int ?? 0) > 0 && $0["ts"] is Int && $0["tid"] is Int })
        let trackNames = Set(
            events.filter { $0["name"] as? String == "thread_name" }.compactMap { ($0["args"] as? [String: Any])?["name"] as? String })
        #expect(trackNames.contains("decompress #1"))
        #expect(trackNames.contains("encode #1"))
        // Every named slice track is one that slices use.
        let usedTracks = Set(slices.compactMap { $0["tid"] as? Int })
        #expect(usedTracks.count >= 4)
        let begins = events.filter { $0["ph"] as? String == "b" }.count
        #expect(begins == events.filter { $0["ph"] as? String == "e" }.count)
    }

    @Test func reportJSONDescribesEveryInputAndOutput() throws {
        let directory = try TemporaryDirectory()
        let reportFolder = directory.path + "/report"
        let result = try CommandRunner.run(["run", "--quiet", "--report", reportFolder, try makePipeline(directory)])
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let report = try decoder.decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: reportFolder + "/report.json")))
        #expect(report.inputs == 4 && report.succeeded == 3 && report.failed == 1)
        let good = try #require(report.items.first { $0.input == "in/photo-0.jpg" })
        #expect(good.status == .succeeded)
        #expect(good.width == 400 && good.height == 300)
        #expect(good.bytes == Int64((try Data(contentsOf: URL(fileURLWithPath: directory.path + "/in/photo-0.jpg"))).count))
        #expect(good.outputs.map(\.name) == ["small", "large"])
        #expect(good.outputs[0].width == 100 && good.outputs[0].format == "webp")
        #expect(
            good.outputs[1].bytes
                == (try FileManager.default.attributesOfItem(atPath: directory.path + "/out/photo-0-large.jpg")[.size] as? Int))
        #expect(Set(good.stageSeconds.keys) == ["fetch", "decompress", "process", "encode"])
        let broken = try #require(report.items.first { $0.input == "in/broken.jpg" })
        #expect(broken.status == .failed && broken.stage == .decompress)
        #expect(broken.outputs.allSatisfy { $0.status == .failed })
        let decompress = try #require(report.stages.first { $0.stage == .decompress })
        #expect(decompress.operations == 4)
        #expect(decompress.busySeconds > 0)
    }

    @Test func progressOffATerminalHasNoEscapeCodesAndLogsFollowTheLevel() throws {
        let directory = try TemporaryDirectory()
        let file = try makePipeline(directory)
        let plain = try CommandRunner.run(["run", file])
        #expect(!plain.standardError.contains("\u{1B}["))
        #expect(!plain.standardError.contains("info"))
        let debug = try CommandRunner.run(["run", "--log-level", "debug", file])
        #expect(debug.standardError.contains("debug pipeline"))
        #expect(debug.standardError.contains("item started"))
        #expect(try CommandRunner.run(["run", "--log-level", "loud", file]).status == 2)
        #expect(try CommandRunner.run(["run", "--json", "--quiet", file]).status == 2)
        let both = try CommandRunner.run(["run", "--quiet", "-v", file])
        #expect(both.status == 2 && both.standardError.contains("--quiet and --verbose cannot be used together"), "\(both.standardError)")
    }

    @Test func verboseSaysUpToDateForOutputsItSkipped() throws {
        // Given a pipeline that has run once
        let directory = try TemporaryDirectory()
        let file = try makePipeline(directory)
        let first = try CommandRunner.run(["run", "--verbose", file])
        #expect(first.standardOutput.contains("wrote \(directory.path)/out/photo-0-small.webp"))

        // When it runs again with nothing changed
        let second = try CommandRunner.run(["run", "--verbose", file])

        // Then every output is said to be up to date, none to be written
        #expect(second.standardOutput.contains("up to date \(directory.path)/out/photo-0-small.webp"))
        #expect(!second.standardOutput.contains("wrote "), "\(second.standardOutput)")
    }

    @Test func eachFailureAndWarningIsPrintedOnceWhateverTheLogLevel() throws {
        // Given a pipeline with a broken input and a pattern that matches nothing
        let directory = try TemporaryDirectory()
        let file = try makePipeline(directory)
        let text = try String(contentsOfFile: file, encoding: .utf8)
            .replacingOccurrences(of: #"["in/*.jpg"]"#, with: #"["in/*.jpg", "in/*.png"]"#)
        try directory.write(Data(text.utf8), to: "pipeline.json")

        for level in ["warning", "info", "debug"] {
            // When it runs at that log level
            let result = try CommandRunner.run(["run", "--log-level", level, file])
            let lines = result.standardError.split(separator: "\n")

            // Then the failure and the warning each take exactly one line
            #expect(lines.filter { $0.contains("not an image") }.count == 1, "\(level): \(result.standardError)")
            #expect(lines.filter { $0.contains("in/*.png") }.count == 1, "\(level): \(result.standardError)")
        }
    }

    @Test func aFailedStepIsNamedByItsIndexAndNameEverywhere() throws {
        // Given an output whose second step, a region crop, cannot fit the resized image
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 400, height: 300)), to: "in/photo.jpg")
        let json = """
            {"version": 1, "inputs": ["in/*.jpg"],
             "outputs": [{"name": "cut", "steps": [{"resize": {"width": 100}}, {"crop": {"left": 0, "top": 0, "width": 200, "height": 200}}],
                          "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}]}
            """
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")

        // When it runs, printing JSON events and a report
        let reportFolder = directory.path + "/report"
        let plain = try CommandRunner.run(["run", file])
        let scripted = try CommandRunner.run(["run", "--json", "--report", reportFolder, file])

        // Then the failure names the step, not only the stage
        #expect(plain.status == 1)
        #expect(
            plain.standardError.contains("failed: in/photo.jpg → cut: process: steps[1].crop: the crop region 200×200"),
            "\(plain.standardError)")
        let failed = try #require(try objects(scripted.standardOutput).first { $0["event"] as? String == "itemFailed" })
        let step = try #require(failed["step"] as? [String: Any])
        #expect(step["index"] as? Int == 1 && step["name"] as? String == "crop")
        #expect((failed["reason"] as? String)?.hasPrefix("the crop region") == true)
        #expect(failed["kind"] as? String == "processing")
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let report = try decoder.decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: reportFolder + "/report.json")))
        #expect(report.items.first?.outputs.first?.step == ItemError.Step(index: 1, name: "crop"))
        #expect(report.items.first?.outputs.first?.kind == "processing")
        let html = try String(contentsOfFile: reportFolder + "/index.html", encoding: .utf8)
        #expect(html.contains("steps[1].crop"))
    }

    @Test func theSummaryNamesTheFolderTheOutputsWentTo() throws {
        // Given a pipeline whose outputs all go below out/
        let directory = try TemporaryDirectory()
        let file = try makePipeline(directory)

        // When it runs from its folder, plainly and with JSON events
        let plain = try CommandRunner.run(["run", file], in: directory.url)
        let scripted = try CommandRunner.run(["run", "--json", "--force", file], in: directory.url)

        // Then the summary names that folder, relative to where the command ran
        #expect(plain.status == 1)
        #expect(plain.standardOutput.contains("6 outputs written"), "\(plain.standardOutput)")
        #expect(plain.standardOutput.hasSuffix("; outputs in out/\n"), "\(plain.standardOutput)")
        let finished = try #require(try objects(scripted.standardOutput).last)
        #expect(finished["event"] as? String == "runFinished")
        #expect((finished["outputFolder"] as? String)?.hasSuffix("/out/") == true, "\(finished)")
        #expect((finished["firstOutput"] as? String)?.hasPrefix(finished["outputFolder"] as? String ?? "-") == true, "\(finished)")
    }

    @Test func outputsInSeveralFoldersAreNamedByTheFirstAndACount() throws {
        // Given outputs in two folders beside each other
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 400, height: 300))
        for index in 0..<3 { try directory.write(photo, to: "in/photo-\(index).jpg") }
        let json = """
            {"version": 1, "inputs": ["in/*.jpg"],
             "outputs": [
               {"name": "small", "steps": [{"resize": {"width": 100}}], "encode": {"format": "webp"}, "path": "small/{stem}.webp"},
               {"name": "large", "steps": [{"resize": {"width": 200}}], "encode": {"format": "jpeg"}, "path": "large/{stem}.jpg"}
             ]}
            """
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")

        // When it runs
        let plain = try CommandRunner.run(["run", file], in: directory.url)
        let scripted = try CommandRunner.run(["run", "--json", file], in: directory.url)

        // Then the summary names the first output and how many more there are, and JSON has no folder
        #expect(plain.status == 0)
        let said = try #require(
            plain.standardOutput.firstMatch(of: /; outputs: (small|large)\/photo-[0-2]\.(webp|jpg) and 5 more\n$/),
            "\(plain.standardOutput)")
        #expect(
            FileManager.default.fileExists(atPath: directory.path + "/" + said.output.0.dropFirst("; outputs: ".count).prefix { $0 != " " })
        )
        let finished = try #require(try objects(scripted.standardOutput).last)
        #expect(finished["outputFolder"] == nil, "\(finished)")
        #expect((finished["firstOutput"] as? String)?.hasPrefix(directory.path) == true, "\(finished)")
        // The second run left every output as it was, and still says where they are
        #expect(finished["outputsUpToDate"] as? Int == 6)
    }
}
