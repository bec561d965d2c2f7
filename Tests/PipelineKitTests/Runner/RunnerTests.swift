import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// The runner end to end on real files: fan-out, per-item failure, atomic writes, bounds, cancellation.
@Suite struct RunnerTests {
    static let processors = ProcessorRegistry.standard.adding(RecordingProcessor.self).adding(FailingProcessor.self)

    /// Writes `count` real JPEGs named `photo-N.jpg` under `folder`.
    func writePhotos(_ count: Int, to directory: TemporaryDirectory, folder: String = "in", width: Int = 640, height: Int = 480) throws {
        let data = try Fixtures.jpeg(try Fixtures.gradient(width: width, height: height))
        for index in 0..<count { try directory.write(data, to: "\(folder)/photo-\(index).jpg") }
    }

    func output(_ name: String, steps: String = "[]", format: String = "jpeg", path: String) -> String {
        #"{"name": "\#(name)", "steps": \#(steps), "encode": {"format": "\#(format)"}, "path": "\#(path)"}"#
    }

    @Test func everyOutputOfAnInputStartsFromOneDecode() async throws {
        // Given three outputs whose first step records the image object it receives
        let directory = try TemporaryDirectory()
        try writePhotos(4, to: directory)
        let tag = "fan-out-\(UUID().uuidString)"
        let record = #"[{"record": {"tag": "\#(tag)"}}]"#
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                output("a", steps: record, path: "out/{stem}-a.jpg"),
                output("b", steps: record, format: "webp", path: "out/{stem}-b.webp"),
                output("c", steps: record, format: "png", path: "out/{stem}-c.png"),
            ])
        // When the pipeline runs
        let (reports, summary) = try await PipelineHarness.run(json, in: directory, processors: Self.processors)
        // Then each input was decoded once and that one image served all three outputs
        #expect(summary.succeeded == 4 && summary.failed == 0 && summary.outputsWritten == 12)
        let calls = RecordingProcessor.calls(tagged: tag)
        #expect(calls.count == 12)
        for (input, callsOfInput) in Dictionary(grouping: calls, by: \.input) {
            #expect(Set(callsOfInput.map(\.output)) == ["a", "b", "c"], "\(input)")
            #expect(Set(callsOfInput.map(\.image)).count == 1, "\(input) was decoded more than once")
        }
        #expect(reports.allSatisfy { $0.written.map(\.output) == ["a", "b", "c"] })
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.count == 12)
    }

    @Test func decodingIsShrunkToServeTheLargestOutput() async throws {
        // Given a 2000×1000 JPEG and outputs of 200 and 100 px wide
        let directory = try TemporaryDirectory()
        try writePhotos(1, to: directory, width: 2000, height: 1000)
        let tag = "shrink-\(UUID().uuidString)"
        let chain = { (width: Int) in #"[{"resize": {"width": \#(width)}}, {"record": {"tag": "\#(tag)"}}]"# }
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                output("small", steps: chain(100), path: "out/{stem}-small.jpg"),
                output("medium", steps: chain(200), path: "out/{stem}-medium.jpg"),
            ])
        // When it runs
        let (reports, _) = try await PipelineHarness.run(json, in: directory, processors: Self.processors)
        // Then the outputs have their sizes, and the decode was shrunk on load by 8 (the largest
        // JPEG factor within 2000/200 = 10) and then resampled to exactly what the larger output needs
        let sizes = reports.first?.written.map(\.size)
        #expect(sizes == [ImageSize(width: 100, height: 50), ImageSize(width: 200, height: 100)])
        #expect(reports.first?.originalSize == ImageSize(width: 2000, height: 1000))
        let plan = try PipelineHarness.pipeline(json, in: directory, processors: Self.processors).plan()
        let decoder = ImageDecoder(settings: plan.definition.decompress, outputs: plan.definition.outputs)
        let path = plan.items[0].input.path
        let decoded = try decoder.decode(.file(path: path, byteCount: 0))
        #expect(decoded.shrink == 8)
        #expect(decoded.image.size == ImageSize(width: 200, height: 100))
    }

    @Test func aBrokenInputFailsAloneAndNamesItsStage() async throws {
        // Given two good photos, a text file named .jpg, and an empty one
        let directory = try TemporaryDirectory()
        try writePhotos(2, to: directory)
        try directory.write(Data("not an image".utf8), to: "in/notes.jpg")
        try directory.write(Data(), to: "in/empty.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg", "in/missing.jpg"],
            outputs: [
                output("thumb", steps: #"[{"resize": {"width": 64}}]"#, path: "out/{stem}.jpg")
            ])
        // When it runs
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        // Then the good ones are written and each failure names its input, stage and reason
        #expect(summary.succeeded == 2)
        #expect(summary.failed == 3)
        let failures = reports.flatMap(\.failures)
        let notes = failures.first { $0.input == "in/notes.jpg" }
        #expect(notes?.stage == .decompress)
        #expect(notes?.reason.contains("not an image") == true)
        #expect(failures.first { $0.input == "in/empty.jpg" }?.stage == .fetch)
        #expect(failures.first { $0.input == "in/missing.jpg" }?.stage == .fetch)
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") } == ["out/photo-0.jpg", "out/photo-1.jpg"])
    }

    @Test func aProcessorErrorFailsOnlyItsOutput() async throws {
        let directory = try TemporaryDirectory()
        try writePhotos(1, to: directory)
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                output("good", path: "out/{stem}-good.jpg"),
                output("bad", steps: #"[{"fail": {}}]"#, path: "out/{stem}-bad.jpg"),
            ])
        let (reports, summary) = try await PipelineHarness.run(json, in: directory, processors: Self.processors)
        #expect(summary.failed == 1)
        #expect(reports[0].written.map(\.output) == ["good"])
        #expect(reports[0].failures.count == 1)
        #expect(reports[0].failures[0].output == "bad")
        #expect(reports[0].failures[0].stage == .process)
        #expect(reports[0].failures[0].reason.contains("always fails"))
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") } == ["out/photo-0-good.jpg"])
    }

    @Test func outputsAreWholeImagesWithTheUmaskModeAndNoTemporaryFilesRemain() async throws {
        let directory = try TemporaryDirectory()
        try writePhotos(3, to: directory)
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                output("webp", steps: #"[{"resize": {"width": 100}}]"#, format: "webp", path: "out/{stem}.webp")
            ])
        _ = try await PipelineHarness.run(json, in: directory)
        let outputs = directory.allFiles().filter { $0.hasPrefix("out/") }
        #expect(outputs.count == 3)
        #expect(!directory.allFiles().contains { $0.contains(ImageWriter.temporaryMarker) })
        for file in outputs {
            let path = directory.path + "/" + file
            let image = try VipsImage.open(file: path, options: "fail_on=warning")
            #expect(try image.rendered().width == 100)
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            let mode = (attributes[.posixPermissions] as? NSNumber)?.uint16Value ?? 0
            // The umask the process started with: read now, it may be liborc's for a moment (077).
            #expect(mode_t(mode) == Vips.newFileMode, "mode \(String(mode, radix: 8))")
        }
    }

    @Test func globsWithDoubleStarKeepSubfoldersInDir() async throws {
        let directory = try TemporaryDirectory()
        try writePhotos(1, to: directory, folder: "in/2024/may")
        try writePhotos(1, to: directory, folder: "in")
        let json = PipelineHarness.json(
            inputs: ["in/**/*.jpg"],
            outputs: [
                output("t", steps: #"[{"resize": {"width": 32}}]"#, path: "out/{dir}/{stem}-{width}x{height}.jpg")
            ])
        let (_, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.succeeded == 2)
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") } == ["out/2024/may/photo-0-32x24.jpg", "out/photo-0-32x24.jpg"])
    }

    @Test func clashingOutputPathsAreFoundBeforeTheRun() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.solid(width: 8, height: 8)), to: "in/a.jpg")
        try directory.write(try Fixtures.png(try Fixtures.solid(width: 8, height: 8)), to: "in/a.png")
        let json = PipelineHarness.json(inputs: ["in/*"], outputs: [output("t", path: "out/{stem}.jpg")])
        #expect {
            try PipelineHarness.pipeline(json, in: directory).plan()
        } throws: { error in
            guard let error = error as? PipelineFileError else { return false }
            return error.problems.count == 1 && error.problems[0].message.contains("would both write")
                && error.problems[0].path == "outputs[0].path" && error.problems[0].location?.line == 2
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
    }

    @Test func anOutputMayNotOverwriteItsInput() throws {
        let directory = try TemporaryDirectory()
        try writePhotos(1, to: directory)
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output("t", path: "in/{stem}.jpg")])
        #expect(throws: PipelineFileError.self) { try PipelineHarness.pipeline(json, in: directory).plan() }
    }

    @Test func aSymlinkedSubfolderCannotLeadOutputsOutOfTheirFolder() async throws {
        let directory = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        try writePhotos(1, to: directory, folder: "in/sub")
        try FileManager.default.createDirectory(atPath: directory.path + "/out", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/out/sub", withDestinationPath: outside.path)
        let json = PipelineHarness.json(inputs: ["in/**/*.jpg"], outputs: [output("t", path: "out/{dir}/{stem}.jpg")])
        // Refused when planned, as validate plans: before any work
        await #expect {
            _ = try await PipelineHarness.run(json, in: directory)
        } throws: { error in
            "\(error)".contains("leads outside") && "\(error)".contains("symbolic link")
        }
        #expect(outside.allFiles().isEmpty)
    }

    /// A commit renames over the path: a link there is replaced, and the file it led to, which
    /// may be anything (an input of another run), is left as it was.
    @Test func anOutputAtASymbolicLinkReplacesTheLinkAndLeavesWhereItLed() async throws {
        let directory = try TemporaryDirectory()
        let elsewhere = try TemporaryDirectory()
        try writePhotos(1, to: directory, folder: "in")
        let target = try elsewhere.write(Data("kept".utf8), to: "t.jpg")
        try FileManager.default.createDirectory(atPath: directory.path + "/out", withIntermediateDirectories: true)
        let name = String(try #require(directory.allFiles().first { $0.hasPrefix("in/") }).dropFirst(3))
        let link = directory.path + "/out/" + name
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output("t", path: "out/{name}")])
        _ = try await PipelineHarness.run(json, in: directory)
        #expect(try FileManager.default.attributesOfItem(atPath: link)[.type] as? FileAttributeType == .typeRegular)
        #expect(try VipsImage.open(file: link).width > 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == Data("kept".utf8))
    }

    @Test func inputsInFlightStayWithinTheBound() async throws {
        let directory = try TemporaryDirectory()
        try writePhotos(12, to: directory, width: 64, height: 64)
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output("t", path: "out/{stem}.jpg")], extra: #""inFlight": 3"#)
        let (_, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.succeeded == 12)
        #expect(summary.peakInFlight == 3)
    }

    @Test func cancellingStopsQueuedWorkAndLeavesNoPartialFiles() async throws {
        // Given many inputs and a narrow pipeline
        let directory = try TemporaryDirectory()
        try writePhotos(40, to: directory, width: 800, height: 600)
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                output("a", steps: #"[{"resize": {"width": 300}}]"#, format: "webp", path: "out/{stem}.webp")
            ], extra: #""inFlight": 2, "decompress": {"concurrency": 1}"#)
        let run = try PipelineHarness.pipeline(json, in: directory).run()
        // When the run is cancelled as soon as the first input completes
        var summary: RunSummary?
        var completed = 0
        var reported: Set<String> = []
        var reportedInputs: [String] = []
        for await event in run {
            switch event {
            case .itemCompleted(let report):
                completed += 1
                reported.formUnion(report.written.map(\.path))
                reportedInputs.append(report.input.displayName)
                if completed == 1 { run.cancel() }
            case .finished(let final): summary = final
            case .started, .itemStarted, .stageFinished: break
            }
        }
        // Then it ends early, says so, and every file present is a whole image
        let final = try #require(summary)
        #expect(final.cancelled)
        #expect(final.notRun > 0)
        #expect(final.succeeded < 40)
        // and names each input it did not finish, those never started too
        let finished = Set(reportedInputs)
        #expect(final.inputsNotRun.count == final.notRun)
        let planned = Set(try PipelineHarness.pipeline(json, in: directory).plan().items.map(\.input.displayName))
        #expect(planned.count == 40)
        #expect(Set(final.inputsNotRun.map(\.input)) == planned.subtracting(finished))
        let files = directory.allFiles().filter { $0.hasPrefix("out/") }
        #expect(files.count == final.outputsWritten)
        // and the reports with the summary's part-made files name every one
        #expect(Set(files.map { directory.path + "/" + $0 }) == reported.union(final.partlyMade.map(\.path)))
        #expect(!directory.allFiles().contains { $0.contains(ImageWriter.temporaryMarker) })
        for file in files {
            #expect(try VipsImage.open(file: directory.path + "/" + file, options: "fail_on=warning").rendered().width == 300)
        }
    }

    @Test func aRunCancelledPartWayThroughAnInputCountsTheFilesItWrote() async throws {
        // Given one input with two outputs, the slow one's step held until the test lets it go
        // (two process lanes: the fast one does not wait behind it)
        let directory = try TemporaryDirectory()
        try writePhotos(1, to: directory, width: 64, height: 48)
        let release = directory.path + "/release"
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                output("fast", path: "out/{stem}-fast.jpg"),
                output(
                    "slow", steps: #"[{"sleep": {"seconds": 0, "input": "photo", "after": "\#(release)"}}]"#,
                    path: "out/{stem}-slow.jpg"),
            ], extra: #""process": {"concurrency": 2}"#)
        let processors = ProcessorRegistry.standard.adding(SleepingProcessor.self)
        let pipeline = try PipelineHarness.pipeline(json, in: directory, processors: processors)
        let recorder = try RunRecorder(definition: pipeline.definition, keepsTrace: false)
        let run = try pipeline.run()
        // When the run is cancelled once the fast output is written, and then the slow step ends
        let fast = directory.path + "/out/photo-0-fast.jpg"
        let stopper = Task {
            for _ in 0..<3000 where !FileManager.default.fileExists(atPath: fast) { try? await Task.sleep(for: .milliseconds(20)) }
            run.cancel()
            _ = FileManager.default.createFile(atPath: release, contents: Data())
        }
        var summary: RunSummary?
        var completed = 0
        for await event in run {
            recorder.record(event)
            if case .itemCompleted = event { completed += 1 }
            if case .finished(let final) = event { summary = final }
        }
        await stopper.value
        // Then the input is neither succeeded nor failed, but its file is counted as written
        let final = try #require(summary)
        #expect(final.cancelled)
        #expect(completed == 0)
        #expect((final.succeeded, final.failed, final.notRun) == (0, 0, 1))
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") } == ["out/photo-0-fast.jpg"])
        #expect(final.outputsWritten == 1)
        #expect(final.partlyMade.map(\.path) == [fast])
        // and the report lists it as not run, with the file it had
        let items = try recorder.report.items
        try #require(items.count == 1)
        let item = items[0]
        #expect(item.input.hasSuffix("photo-0.jpg") && item.status == .notRun)
        #expect(item.outputs.map(\.path) == [fast] && item.outputs.map(\.status) == [.succeeded])
        #expect(!directory.allFiles().contains { $0.contains(ImageWriter.temporaryMarker) })
        // And the journal agrees: the next run finds that file up to date and makes the other
        let (_, next) = try await PipelineHarness.run(json, in: directory, processors: processors)
        #expect((next.succeeded, next.outputsWritten, next.outputsUpToDate) == (1, 1, 1))
    }

    @Test func aRunCancelledWithAGraceStopsTheWorkStillRunningAfterIt() async throws {
        // Given an input whose step would take 30 s, asking its context whether to stop
        let directory = try TemporaryDirectory()
        let name = "graced-\(UUID().uuidString)"
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 64, height: 48)), to: "in/\(name).png")
        let step = #"{"sleep": {"seconds": 30, "input": "\#(name)", "honoursTime": true}}"#
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [#"{"name": "t", "steps": [\#(step)], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#])
        let pipeline = try PipelineHarness.pipeline(
            json, in: directory, processors: ProcessorRegistry.standard.adding(SleepingProcessor.self))
        let run = try pipeline.run()
        // When the run is cancelled once the step runs, with a grace shorter than the step
        let stopper = Task {
            for _ in 0..<3000 where (run.stageCounts()[.process]?.running ?? 0) == 0 { try? await Task.sleep(for: .milliseconds(20)) }
            run.cancel(stoppingRunningWorkAfter: .milliseconds(200))
        }
        let (_, summary) = await run.collect()
        await stopper.value
        // Then the step is told to stop, the input is not run, and nothing is left of it
        let final = try #require(summary)
        #expect(final.cancelled && final.notRun == 1, "\(final)")
        #expect(!SleepingProcessor.sleptWhole.withLock { $0.contains("in/\(name).png") }, "the step was never told to stop")
        #expect(!directory.allFiles().contains { $0.hasPrefix("out/") })
    }
}
