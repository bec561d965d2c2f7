import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// A run whose events nobody can see any more is cancelled, as the iterating task's cancel does.
@Suite struct DroppedRunTests {
    @Test func leavingTheLoopOverARunsEventsCancelsIt() async throws {
        // Given a large input that runs first, and five photos whose step waits for a file (two
        // process lanes: a photo waiting holds one, the first input takes the other)
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 300, height: 200)), to: "in/a-first.jpg")
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48))
        for index in 0..<5 { try directory.write(photo, to: "in/photo-\(index).jpg") }
        let release = directory.path + "/release"
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "t", "steps": [{"sleep": {"seconds": 0, "input": "photo", "after": "\#(release)"}}], "#
                    + #""encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#
            ], extra: #""inFlight": 2, "process": {"concurrency": 2}"#)
        let pipeline = try PipelineHarness.pipeline(
            json, in: directory, processors: ProcessorRegistry.standard.adding(SleepingProcessor.self))

        // When a loop over its events is left after the first input, and the photos' step may go on
        for await event in try pipeline.run() {
            if case .itemCompleted = event { break }
        }
        _ = FileManager.default.createFile(atPath: release, contents: Data())

        // Then once no file has come for two seconds, the photos not yet started were never made
        var files = directory.allFiles().filter { $0.hasPrefix("out/") }
        for _ in 0..<60 {
            try await Task.sleep(for: .seconds(2))
            let now = directory.allFiles().filter { $0.hasPrefix("out/") }
            if now == files { break }
            files = now
        }
        #expect(files.contains("out/a-first.jpg"))
        #expect(files.count <= 3, "\(files)")
        #expect(!directory.allFiles().contains { $0.contains(ImageWriter.temporaryMarker) })
    }

    @Test func aRunWhoseIteratingTaskWasCancelledCanBeWaitedFor() async throws {
        // Given a run whose one input's step is on its lane, waiting for a file
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48)), to: "in/photo.jpg")
        let release = directory.path + "/release"
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "t", "steps": [{"sleep": {"seconds": 0.5, "input": "photo", "after": "\#(release)"}}], "#
                    + #""encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#
            ])
        let pipeline = try PipelineHarness.pipeline(
            json, in: directory, processors: ProcessorRegistry.standard.adding(SleepingProcessor.self))
        let run = try pipeline.run()
        let iterating = Task { for await _ in run {} }
        for _ in 0..<6000 where run.stageCounts()[.process]?.running != 1 { try await Task.sleep(for: .milliseconds(10)) }
        try #require(run.stageCounts()[.process]?.running == 1)

        // When the task iterating its events is cancelled (its sequence ends at once), and the
        // step may then go on
        iterating.cancel()
        await iterating.value
        _ = FileManager.default.createFile(atPath: release, contents: Data())

        // Then waiting for the run returns once nothing of it is left on a lane
        await run.ended()
        let counts = run.stageCounts()
        #expect(counts.values.allSatisfy { $0.running == 0 && $0.queued == 0 }, "\(counts)")
        #expect(!directory.allFiles().contains { $0.contains(ImageWriter.temporaryMarker) })
    }
}
