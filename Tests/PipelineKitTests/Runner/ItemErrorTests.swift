import Foundation
// Not @testable: this is what a library user can reach.
import PipelineKit
import StandardProcessors
import TestSupport
import Testing
import Vips

/// A step whose error describes itself as a `LocalizedError` does, not as a
/// `CustomStringConvertible`; or, with `foundation`, the error Foundation gives for a missing file.
struct LocalizedFailingProcessor: ImageProcessing {
    static let name = "failLocalized"
    static let summary = "test: always fails with a LocalizedError"
    static let options: [Option] = [.boolean("foundation", default: false, help: "fail reading a missing file")]

    enum Problem: LocalizedError {
        case noFrame
        var errorDescription: String? { "the frame file is missing" }
    }

    let foundation: Bool
    init(options: ProcessorOptions) throws(OptionError) { foundation = try options.bool("foundation") }
    var identifier: String { "failLocalized(\(foundation))" }
    func outputSize(for size: ImageSize) -> ImageSize { size }
    func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        if foundation { _ = try Data(contentsOf: URL(fileURLWithPath: "/nonexistent/frame.png")) }
        throw Problem.noFrame
    }
}

/// A failure's kind is something to `switch` on, and its underlying error (libvips', the
/// server's, a plugin's) is reachable without parsing the text, which stays as it was.
struct ItemErrorTests {
    /// What a library user would write: a switch on the kind, reaching the underlying error.
    private func explain(_ error: ItemError) -> String {
        switch error.kind {
        case .httpStatus: "status \((error.underlyingError as? HTTPStatusError)?.status ?? 0)"
        case .processing: "step \(error.step?.name ?? "?") threw \(type(of: error.underlyingError.map { $0 as Any } ?? ""))"
        case .undecodable: "libvips: \((error.underlyingError as? VipsError)?.operation ?? "-")"
        case .unsupportedFormat: "not an image"
        default: "other: \(error)"
        }
    }

    @Test func anHTTPStatusIsAKindWithTheStatusUnderneath() async throws {
        let server = try TestHTTPServer { _, _ in .init(status: 404, body: Data("no".utf8)) }
        let directory = try TemporaryDirectory()
        let json = PipelineHarness.json(
            inputs: [server.url("/missing.jpg")],
            outputs: [
                #"{"name": "t", "steps": [{"resize": {"width": 50}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#
            ])
        let (reports, _) = try await PipelineHarness.run(json, in: directory)
        let error = try #require(reports.first?.failures.first?.error)
        #expect(error.kind == .httpStatus && error.stage == .fetch)
        #expect(explain(error) == "status 404")
        #expect(error.description == "fetch: HTTP 404")
    }

    @Test func aFailingStepIsAProcessingKindWithThePluginsErrorUnderneath() async throws {
        let directory = try TemporaryDirectory()
        _ = try directory.write(Fixtures.jpeg(Fixtures.solid(width: 40, height: 30)), to: "a.jpg")
        let json = PipelineHarness.json(
            inputs: ["a.jpg"],
            outputs: [
                #"{"name": "t", "steps": [{"resize": {"width": 20}}, {"fail": {}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#
            ])
        let (reports, _) = try await PipelineHarness.run(json, in: directory, processors: .standard.adding(FailingProcessor.self))
        let error = try #require(reports.first?.failures.first?.error)
        #expect(error.kind == .processing)
        #expect(error.underlyingError is FailingProcessor.Failure)
        #expect(error.step == ItemError.Step(index: 1, name: "fail"))
        #expect(explain(error) == "step fail threw Failure")
        #expect(reports.first?.failures.first?.description == "a.jpg → t: process: steps[1].fail: this processor always fails")
    }

    /// A step runs on a lane of its own, which a run's cancel does not reach: its
    /// `CancellationError` is its own failure, not the run's cancel.
    @Test func aStepThatThrowsCancellationErrorFailsItsOutputOnly() async throws {
        let directory = try TemporaryDirectory()
        _ = try directory.write(Fixtures.jpeg(Fixtures.solid(width: 40, height: 30)), to: "a.jpg")
        let json = PipelineHarness.json(
            inputs: ["a.jpg"],
            outputs: [
                #"{"name": "good", "encode": {"format": "jpeg"}, "path": "out/{stem}-good.jpg"}"#,
                #"{"name": "t", "steps": [{"fail": {"cancellation": true}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#,
            ])
        let (reports, summary) = try await PipelineHarness.run(json, in: directory, processors: .standard.adding(FailingProcessor.self))
        #expect(!summary.cancelled && summary.failed == 1 && summary.notRun == 0, "\(summary)")
        #expect(reports.first?.written.map(\.output) == ["good"])
        let failure = try #require(reports.first?.failures.first)
        #expect(failure.error.kind == .processing && failure.error.step == ItemError.Step(index: 0, name: "fail"))
        #expect(failure.description.contains("steps[0].fail: it threw CancellationError"), "\(failure.description)")
    }

    /// An encoder takes at most 4 bands: a step that makes more fails there, named, where JPEG
    /// said only libvips' words and PNG dropped the fifth band without a word.
    @Test func aStepThatMakesMoreBandsThanAnEncoderTakesFailsNamed() async throws {
        let directory = try TemporaryDirectory()
        _ = try directory.write(Fixtures.jpeg(Fixtures.solid(width: 40, height: 30)), to: "a.jpg")
        let steps = #"[{"resize": {"width": 20}}, {"vips": {"operation": "bandjoin_const", "c": [1, 2]}}]"#
        let json = PipelineHarness.json(
            inputs: ["a.jpg"],
            outputs: ["jpeg", "png"].map {
                #"{"name": "\#($0)", "steps": \#(steps), "encode": {"format": "\#($0)"}, "path": "out/{stem}.\#($0)"}"#
            })
        let (reports, _) = try await PipelineHarness.run(json, in: directory)
        let failures = reports.first?.failures.map(\.description).sorted() ?? []
        #expect(
            failures
                == ["jpeg", "png"].map {
                    "a.jpg → \($0): process: steps[1].vips: it made an image of 5 bands, where an encoder takes at most 4 (colour and alpha)"
                },
            "\(failures)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
    }

    @Test func aStepsLocalizedErrorGivesItsDescription() async throws {
        let directory = try TemporaryDirectory()
        _ = try directory.write(Fixtures.jpeg(Fixtures.solid(width: 40, height: 30)), to: "a.jpg")
        let json = PipelineHarness.json(
            inputs: ["a.jpg"],
            outputs: [#"{"name": "t", "steps": [{"failLocalized": {}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#])
        let processors = ProcessorRegistry.standard.adding(LocalizedFailingProcessor.self)
        let (reports, _) = try await PipelineHarness.run(json, in: directory, processors: processors)
        #expect(reports.first?.failures.first?.description == "a.jpg → t: process: steps[0].failLocalized: the frame file is missing")
        // and one Foundation threw, in the system's words
        let foundation = json.replacingOccurrences(of: #"{"failLocalized": {}}"#, with: #"{"failLocalized": {"foundation": true}}"#)
        let (failed, _) = try await PipelineHarness.run(foundation, in: directory, processors: processors)
        #expect(
            failed.first?.failures.first?.description == "a.jpg → t: process: steps[0].failLocalized: No such file or directory",
            "\(String(describing: failed.first?.failures))")
    }

    @Test func aCutFileIsUndecodableWithLibvipsErrorUnderneath() async throws {
        let directory = try TemporaryDirectory()
        let whole = try Fixtures.jpeg(Fixtures.noise(width: 300, height: 200))
        _ = try directory.write(whole.prefix(whole.count / 2), to: "cut.jpg")
        _ = try directory.write(Data("not an image at all".utf8), to: "text.jpg")
        let json = PipelineHarness.json(
            inputs: ["cut.jpg", "text.jpg"],
            outputs: [
                #"{"name": "t", "steps": [{"resize": {"width": 50}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#
            ])
        let (reports, _) = try await PipelineHarness.run(json, in: directory)
        let errors = Dictionary(
            uniqueKeysWithValues: reports.compactMap { report in
                report.failures.first.map { (report.input.displayName, $0.error) }
            })
        let cut = try #require(errors["cut.jpg"])
        #expect(cut.kind == .undecodable && cut.stage == .decompress)
        #expect(cut.underlyingError is VipsError)
        #expect(try #require(errors["text.jpg"]).kind == .unsupportedFormat)
    }
}
