import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Broken, hostile and unusual files through a real pipeline run: each is either processed or
/// refused with an error naming the input, the stage and the reason; nothing crashes or hangs.
@Suite struct HostileCorpusTests {
    static let cases = CorpusCase.hostileCorpus

    @Test(arguments: cases)
    func eachFileIsProcessedOrRefusedWithItsStageAndReason(_ corpusCase: CorpusCase) async throws {
        // Given the file among the inputs, and a full-size output and a resized one
        let directory = try TemporaryDirectory()
        try directory.write(try corpusCase.make(), to: "in/\(corpusCase.file)")
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "full", "encode": {"format": "png"}, "path": "out/{name}.png"}"#,
                #"{"name": "small", "steps": [{"resize": {"width": 8}}], "encode": {"format": "webp"}, "path": "out/{name}-small.webp"}"#,
            ])
        // When it runs
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        let report = try #require(reports.first)
        #expect(summary.inputs == 1)
        // Then the outcome is the expected one
        switch corpusCase.outcome {
        case .processed(let width, let height):
            #expect(report.failures.isEmpty, "\(report.failures)")
            #expect(report.written.map(\.output) == ["full", "small"])
            let full = try VipsImage.open(file: directory.path + "/out/\(corpusCase.file).png", options: "fail_on=warning").rendered()
            #expect(full.size == ImageSize(width: width, height: height))
            #expect(full.pageCount == 1)
            let small = try VipsImage.open(file: directory.path + "/out/\(corpusCase.file)-small.webp").rendered()
            #expect(small.width == 8)
        case .refused(let stage, let reason), .failed(let stage, let reason), .damaged(let stage, let reason):
            let failure = try #require(report.failures.first)
            #expect(failure.input == "in/\(corpusCase.file)")
            #expect(failure.output == nil, "a failure before fan-out fails the whole input")
            #expect(failure.stage == stage)
            #expect(!failure.reason.isEmpty)
            if case .failed = corpusCase.outcome {} else { #expect(failure.reason.contains(reason), "\(failure.reason)") }
            #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.isEmpty)
        }
    }

    @Test func theWholeCorpusInOneRunFailsOnlyTheBrokenFiles() async throws {
        // Given every corpus file in one folder
        let directory = try TemporaryDirectory()
        for corpusCase in Self.cases { try directory.write(try corpusCase.make(), to: "in/\(corpusCase.file)") }
        let json = PipelineHarness.json(
            inputs: ["in/*"],
            outputs: [
                #"{"name": "t", "steps": [{"resize": {"width": 16, "height": 16, "fit": "cover"}}], "encode": {"format": "jpeg"}, "path": "out/{name}.jpg"}"#
            ])
        // When they run together
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        // Then each good file is written and each broken one fails alone
        let expectedFailures = Set(Self.cases.filter(\.outcome.isFailure).map { "in/" + $0.file })
        #expect(summary.inputs == Self.cases.count)
        #expect(Set(reports.filter { !$0.succeeded }.map(\.input.displayName)) == expectedFailures)
        #expect(summary.outputsWritten == Self.cases.count - expectedFailures.count)
        #expect(!directory.allFiles().contains { $0.contains(ImageWriter.temporaryMarker) })
    }

    @Test(arguments: [
        (DecompressSettings.FailOn.none, true), (.truncated, false), (.error, false), (.warning, false),
    ])
    func failOnDecidesWhetherATruncatedJPEGIsDecoded(failOn: DecompressSettings.FailOn, decodes: Bool) async throws {
        // Given a JPEG cut in half
        let directory = try TemporaryDirectory()
        try directory.write(HostileFixtures.truncated(try HostileFixtures.photo("jpg", width: 256, height: 256)), to: "in/cut.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
            ], extra: #""decompress": {"failOn": "\#(failOn.rawValue)"}"#)
        // When it runs with that failOn
        let (reports, _) = try await PipelineHarness.run(json, in: directory)
        // Then "none" decodes what is there (the rest grey) and every stricter level refuses it
        #expect(reports[0].succeeded == decodes, "\(reports[0].failures)")
        if !decodes { #expect(reports[0].failures.first?.stage == .decompress) }
    }

    @Test func failOnDefaultsToTruncated() throws {
        let definition = try PipelineDefinition(
            json: PipelineHarness.json(
                inputs: ["a.jpg"],
                outputs: [
                    #"{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
                ]), baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard)
        #expect(definition.decompress.failOn == .truncated)
        #expect(definition.decompress.timeout == 60)
    }
}
