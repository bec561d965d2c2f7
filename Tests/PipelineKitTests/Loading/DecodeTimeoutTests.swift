import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// `decompress.timeout`: a decode that takes too long is stopped inside libvips and fails its
/// input with a clear reason; the run goes on.
@Suite struct DecodeTimeoutTests {
    /// A 3000×3000 PNG: tens of milliseconds of decoding, far more than a 1 ms limit.
    static func largePNG() throws -> Data {
        try VipsImage(pixels: [UInt8](repeating: 90, count: 3000 * 3000 * 3), width: 3000, height: 3000, bands: 3).encoded(
            suffix: ".png[compression=1]")
    }

    @Test func aDeadlineStopsARenderInsideLibvips() throws {
        // Given a computation that takes many seconds (a wide blur of a 2000×2000 image)
        let slow = try VipsImage(pixels: [UInt8](repeating: 100, count: 2000 * 2000 * 3), width: 2000, height: 2000, bands: 3)
            .gaussianBlurred(sigma: 200)
        // When it is rendered under a 100 ms deadline
        let deadline = VipsDeadline(seconds: 0.1)
        defer { deadline.cancel() }
        // Then libvips itself stops it: the render fails instead of finishing late
        #expect(throws: VipsError.self) { _ = try deadline.render(slow) }
        #expect(deadline.hasExpired)
    }

    @Test func aCancelledDeadlineNeverExpires() throws {
        let time = Locked(0.0)
        let deadline = VipsDeadline(seconds: 0.5, clock: .init { time.withLock { $0 } })
        deadline.cancel()
        let image = try Fixtures.gradient(width: 64, height: 64)
        // Rendering after the limit would have passed still works: the clock was stopped.
        time.withLock { $0 = 1 }
        #expect(try deadline.render(image).width == 64)
        #expect(!deadline.hasExpired)
    }

    @Test(arguments: [0.0, -1, .infinity, 1e300])
    func aLimitThatIsNotAPositiveFiniteTimeNeverExpires(seconds: Double) throws {
        let deadline = VipsDeadline(seconds: seconds)
        #expect(try deadline.render(try Fixtures.gradient(width: 32, height: 32)).width == 32)
        #expect(!deadline.hasExpired)
    }

    @Test func aDecodeOverTheLimitFailsWithTheLimitInTheReason() throws {
        // Given a decoder allowed 1 ms
        let directory = try TemporaryDirectory()
        let data = try Self.largePNG()
        let path = try directory.write(data, to: "large.png")
        var settings = DecoderTests.settings
        settings.timeout = 0.001
        // When it decodes a large PNG
        // Then it stops and says why
        #expect {
            try ImageDecoder(settings: settings, outputs: []).decode(.file(path: path, byteCount: Int64(data.count)))
        } throws: { error in
            guard let error = error as? ItemError else { return false }
            return error.stage == .decompress && error.reason == "decoding took longer than decompress.timeout (1ms) and was stopped"
        }
        // And the same decode without a limit succeeds
        settings.timeout = 0
        #expect(
            try ImageDecoder(settings: settings, outputs: []).decode(.file(path: path, byteCount: Int64(data.count))).image.width == 3000)
    }

    @Test func aTimedOutInputFailsAloneInARun() async throws {
        // Given a large PNG, and a pipeline file with a 1 ms decode limit and an output so small
        // that the whole decode makes one strip of it (the limit must stop the loader itself)
        let directory = try TemporaryDirectory()
        try directory.write(try Self.largePNG(), to: "in/large.png")
        let json = PipelineHarness.json(
            inputs: ["in/large.png"],
            outputs: [
                #"{"name": "t", "steps": [{"resize": {"width": 8}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#
            ], extra: #""decompress": {"timeout": "1ms"}"#)
        // When it runs
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        // Then that input fails at decompress, naming the limit, and the run finishes
        #expect(summary.failed == 1)
        let failure = try #require(reports.first?.failures.first)
        #expect(failure.input == "in/large.png")
        #expect(failure.stage == .decompress)
        #expect(failure.reason.contains("took longer than decompress.timeout (1ms)"))
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.isEmpty)
    }

    /// A plain number is seconds, as a timeout is written in most configuration files.
    @Test(arguments: [("\"30s\"", 30.0), ("\"500ms\"", 0.5), ("\"2m\"", 120), ("\"0s\"", 0), ("30", 30), ("0.25", 0.25)])
    func theTimeoutIsReadAsADuration(text: String, seconds: Double) throws {
        let json = PipelineHarness.json(
            inputs: ["a.jpg"],
            outputs: [
                #"{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
            ], extra: #""decompress": {"timeout": \#(text)}"#)
        let definition = try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard)
        #expect(definition.decompress.timeout == seconds)
    }

    @Test(arguments: ["\"30 seconds\"", "-1", "31536001", "true", "\"-1s\"", "\"\""])
    func aTimeoutThatIsNotADurationIsAnErrorInTheFile(text: String) {
        let json = PipelineHarness.json(
            inputs: ["a.jpg"],
            outputs: [
                #"{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
            ], extra: #""decompress": {"timeout": \#(text)}"#)
        #expect {
            try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard)
        } throws: { error in
            guard let error = error as? PipelineFileError else { return false }
            return error.problems.contains { $0.path == "decompress.timeout" && $0.message.contains("duration") }
        }
    }
}
