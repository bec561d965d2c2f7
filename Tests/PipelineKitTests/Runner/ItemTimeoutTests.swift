import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// `limits.itemTimeout`: one input's whole time, from the start of its decode to the commit of its
/// last output. An input past it fails naming itself, the stage it was in and the limit; its work
/// is stopped inside libvips, nothing of it is left on disk, and the other inputs go on.
@Suite struct ItemTimeoutTests {
    static let processors = ProcessorRegistry.standard.adding(SleepingProcessor.self)

    static func definition(_ limits: String?) throws -> PipelineDefinition {
        let json = PipelineHarness.json(
            inputs: ["a.jpg"], outputs: [#"{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#],
            extra: limits.map { #""limits": {"itemTimeout": \#($0)}"# } ?? "")
        return try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard)
    }

    @Test func theLimitIsFiveMinutesUnlessTheFileSetsADuration() throws {
        #expect(try Self.definition(nil).limits.itemTimeout == 300)
        #expect(Units.text(seconds: LimitsSettings.defaultItemTimeout) == "5m")
        for (text, seconds) in [("\"2s\"", 2.0), ("\"250ms\"", 0.25), ("\"10m\"", 600), ("\"0s\"", 0)] {
            #expect(try Self.definition(text).limits.itemTimeout == seconds, "\(text)")
        }
    }

    @Test(arguments: ["-30", "\"soon\"", "\"-1s\""])
    func aLimitThatIsNotADurationIsAnErrorInTheFile(text: String) {
        #expect {
            try Self.definition(text)
        } throws: { error in
            guard let error = error as? PipelineFileError else { return false }
            return error.problems.contains { $0.path == "limits.itemTimeout" && $0.message.contains("duration") }
        }
    }

    @Test func aSlowInputFailsNamingItselfTheStageAndTheLimitAndLeavesNothing() async throws {
        // Given an image and an output whose step takes 11 s, under a limit of 10 s
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 64, height: 48)), to: "in/slow.png")
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "t", "steps": [{"sleep": {"seconds": 11, "input": "slow"}}], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#
            ],
            extra: #""limits": {"itemTimeout": "10s"}"#)
        // When it runs
        let (reports, summary) = try await PipelineHarness.run(json, in: directory, processors: Self.processors)
        // Then it fails past the limit, naming the input and the limit
        #expect(summary.failed == 1)
        let failure = try #require(reports.first?.failures.first)
        #expect(failure.error.kind == .timedOut)
        #expect(
            failure.reason.hasPrefix("in/slow.png took longer than limits.itemTimeout (10s) and was stopped while "), "\(failure.reason)")
        // in the stage it was in: the steps, unless (when other tests may hold the lanes for
        // seconds) the decode itself waited past the limit
        if CommandRunner.lanesAreFree {
            #expect(failure.stage == .process)
            #expect(failure.reason.hasSuffix(#"while running the steps of output "t""#), "\(failure.reason)")
            // and the step it was stopped in, as any other failure of a step names it
            #expect(failure.step == ItemError.Step(index: 0, name: "sleep"), "\(String(describing: failure.step))")
        }
        // And nothing of it is on disk, not even a temporary file
        #expect(!directory.allFiles().contains { $0.hasPrefix("out/") })
        #expect(!directory.allFiles().contains { $0.contains(ImageWriter.temporaryMarker) })
    }

    /// A step that works in Swift, which no kill flag reaches, stops on time when it asks its
    /// context, and the input fails on its limit, naming the step.
    @Test func aStepThatAsksItsContextStopsWhenTheTimeRunsOut() async throws {
        let directory = try TemporaryDirectory()
        let name = "asks-\(UUID().uuidString)"
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 64, height: 48)), to: "in/\(name).png")
        let step = #"{"sleep": {"seconds": 40, "input": "\#(name)", "honoursTime": true}}"#
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [#"{"name": "t", "steps": [\#(step)], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#],
            extra: #""limits": {"itemTimeout": "2s"}"#)
        let (reports, _) = try await PipelineHarness.run(json, in: directory, processors: Self.processors)
        let failure = try #require(reports.first?.failures.first)
        #expect(failure.error.kind == .timedOut, "\(failure)")
        #expect(!SleepingProcessor.sleptWhole.withLock { $0.contains("in/\(name).png") }, "the step was never told to stop")
        #expect(!directory.allFiles().contains { $0.hasPrefix("out/") })
    }

    /// Skipped in a sanitized build's whole suite: there the other tests' work holds the small
    /// input's lanes (libdispatch's threads are the whole process's) past any limit short enough
    /// to test. `make test` runs it again in a process of its own.
    @Test(.enabled(if: CommandRunner.lanesAreFree, "a sanitized build's other tests hold the lanes past any limit"))
    func theOtherInputsGoOnWhileOneIsPastTheLimit() async throws {
        // Given two small images, and an output whose step, on one of them, waits for the other's
        // file and then takes 31 s, under a limit of 30 s (two process lanes: a wait for a lane
        // counts in an input's time). The limit leaves the small one room to be made on a
        // machine busy with other tests.
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.png(try Fixtures.gradient(width: 64, height: 48))
        try directory.write(photo, to: "in/slow.png")
        try directory.write(photo, to: "in/fast.png")
        let step = #"{"sleep": {"seconds": 31, "input": "slow", "after": "\#(directory.path)/out/fast.webp"}}"#
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [#"{"name": "t", "steps": [\#(step)], "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#],
            extra: #""limits": {"itemTimeout": "30s"}, "process": {"concurrency": 2}"#)
        // When they run
        let (reports, summary) = try await PipelineHarness.run(json, in: directory, processors: Self.processors)
        // Then the slow one fails, and the other is made
        #expect(summary.succeeded == 1 && summary.failed == 1)
        #expect(reports.first { $0.input.displayName == "in/slow.png" }?.failures.first?.error.kind == .timedOut)
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") } == ["out/fast.webp"])
        #expect(!directory.allFiles().contains { $0.contains(ImageWriter.temporaryMarker) })
    }

    @Test func timeRunOutWhileWaitingForALaneSaysSo() async throws {
        // Given an input whose time has run out
        let deadline = ItemDeadline(seconds: 0.001, input: "in/tiny.png")
        for _ in 0..<1000 where !deadline.hasRunOut { try await Task.sleep(for: .milliseconds(5)) }
        // When an output's work takes its lane, then it fails saying the time ran out waiting for it
        for (stage, expected) in [
            (Stage.process, #"before the steps of output "t" began, while they waited for a process lane"#),
            (Stage.encode, #"before output "t" was encoded, while it waited for an encode lane"#),
        ] {
            #expect {
                try deadline.check(stage, output: "t")
            } throws: { error in
                (error as? ItemError)?.reason == "in/tiny.png took longer than limits.itemTimeout (1ms) and was stopped " + expected
            }
        }
        // while work stopped on its lane says what it was doing
        #expect(deadline.timedOut(in: .process, output: "t").reason.hasSuffix(#"while running the steps of output "t""#))
    }

    @Test func aSlowDecodeIsStoppedInsideLibvipsByTheInputsLimit() async throws {
        // Given an animation of 300 frames, far more than a millisecond of decoding, and the
        // decode's own limit left at its default (60 s)
        let gif = GIFWriter.noise(frames: 300, width: 160, height: 120)
        let directory = try TemporaryDirectory()
        try directory.write(gif, to: "in/long.gif")
        let json = PipelineHarness.json(
            inputs: ["in/*.gif"],
            outputs: [#"{"name": "g", "steps": [{"resize": {"width": 80}}], "encode": {"format": "gif"}, "path": "out/{stem}.gif"}"#],
            extra: #""limits": {"itemTimeout": "1ms"}"#)
        // When it runs under an input limit of 1 ms
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        // Then the input fails while decoding, naming the input's limit rather than the decode's
        #expect(summary.failed == 1)
        let failure = try #require(reports.first?.failures.first)
        #expect(failure.stage == .decompress)
        #expect(failure.reason == "in/long.gif took longer than limits.itemTimeout (1ms) and was stopped while decoding")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.isEmpty)
    }
}
