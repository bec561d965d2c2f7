import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// `"quality": {"ssimulacra2": …}`: read from the pipeline file, searched per image, recorded
/// and remembered.
@Suite struct QualityTargetTests {
    static let photo = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/samples/storm.jpg")

    func json(_ encode: String, extension pathExtension: String = "jpg") -> String {
        PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "web", "steps": [{"resize": {"width": 400}}], "encode": \#(encode), "path": "out/{stem}.\#(pathExtension)"}"#
            ])
    }

    func setUp() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        try directory.write(try Data(contentsOf: Self.photo), to: "in/storm.jpg")
        return directory
    }

    // MARK: Reading

    @Test func aTargetIsReadOnEachLossyFormat() throws {
        let directory = try TemporaryDirectory()
        for format in ["jpeg", "webp", "avif", "jxl", "heic"] {
            let text = json(#"{"format": "\#(format)", "quality": {"ssimulacra2": 72.5, "min": 30, "max": 90}}"#, extension: "{format}")
            let pipeline = try PipelineHarness.pipeline(text, in: directory)
            let encoder = try #require(pipeline.definition.outputs.first?.encoder)
            #expect(encoder.qualityTarget == QualityTarget(ssimulacra2: 72.5, min: 30, max: 90), "\(format)")
            #expect(encoder.identity.contains("searches quality for SSIMULACRA2 72.5 within 30-90"), "\(encoder.identity)")
        }
    }

    @Test func aTargetIsReadInFormatsEntries() throws {
        let directory = try TemporaryDirectory()
        let text = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "web", "formats": [{"format": "webp", "quality": {"ssimulacra2": 80}}, {"format": "jpeg", "quality": 70}], "path": "out/{stem}.{format}"}"#
            ])
        let outputs = try PipelineHarness.pipeline(text, in: directory).definition.outputs
        #expect(outputs.map(\.encoder.qualityTarget) == [QualityTarget(ssimulacra2: 80), nil])
        #expect(outputs.map(\.encoder.quality) == [80, 70])
    }

    /// Each bad value is an error naming its JSON path.
    @Test(arguments: [
        (#"{"format": "jpeg", "quality": {"ssimulacra2": 120}}"#, "outputs[0].encode.quality"),
        (#"{"format": "jpeg", "quality": {"min": 40}}"#, "outputs[0].encode.quality"),
        (#"{"format": "webp", "quality": {"ssimulacra2": 75, "min": 90, "max": 60}}"#, "outputs[0].encode.quality.min"),
        (#"{"format": "webp", "quality": {"ssimulacra2": 75}, "lossless": true}"#, "outputs[0].encode.quality"),
        (#"{"format": "png", "quality": {"ssimulacra2": 75}}"#, "outputs[0].encode.quality"),
        (#"{"format": "jpeg", "quality": {"ssimulacra2": 75, "maximum": 90}}"#, "outputs[0].encode.quality"),
    ])
    func badTargetsAreErrorsNamingThePath(encode: String, path: String) throws {
        let directory = try TemporaryDirectory()
        let error = try #require(throws: PipelineFileError.self) { try PipelineHarness.pipeline(json(encode), in: directory) }
        #expect(error.problems.contains { $0.path.hasPrefix(path) }, "\(error.problems.map { "\($0.path): \($0.message)" })")
    }

    @Test func theSchemaShowsTheTarget() throws {
        let result = try CommandRunner.run(["schema"])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("ssimulacra2"))
    }

    // MARK: Searching

    /// The search gives the lowest quality whose score reaches the target, within its bounds:
    /// the quality chosen passes and the next lower one tried fails, in at most 6 encodes.
    @Test(arguments: [EncoderSettings.Format.jpeg, .webp, .avif])
    func theSearchFindsTheLowestQualityThatReachesTheTarget(format: EncoderSettings.Format) throws {
        let image = try VipsImage.open(file: Self.photo.path).resized(horizontalScale: 0.25, verticalScale: 0.25, kernel: .lanczos3)
        var settings = EncoderSettings(format: format, strip: true, effort: format == .avif ? 2 : nil)
        settings.qualityTarget = QualityTarget(ssimulacra2: 75, min: 10, max: 100)
        let outcome = try QualitySearch.run(image, settings: settings)
        #expect(outcome.reached && outcome.encodes <= QualitySearch.maximumEncodes)
        let metric = try SSIMULACRA2(original: image)
        let chosen = try metric.score(VipsImage.open(data: outcome.data))
        #expect(abs(chosen - outcome.score) < 1e-9 && chosen >= 75, "\(format) at \(outcome.quality) scored \(chosen)")
        // Within the bracket's width of the lowest passing quality: one step past it fails.
        let lower = outcome.quality - QualitySearch.closeEnough(for: format) - 1
        if lower >= 10 {
            let below = try metric.score(VipsImage.open(data: QualitySearch.trialBytes(image, settings: settings, quality: lower)))
            #expect(below < 75, "\(format) at \(lower) scored \(below), chose \(outcome.quality)")
        }
    }

    /// A search encodes a copy in memory, which an item's deadline does not reach: it checks
    /// the image the deadline watches before each trial, so one past the limit stops there.
    @Test func aSearchWhoseWatchedImageADeadlineStoppedMakesNoTrial() throws {
        let image = try VipsImage.open(file: Self.photo.path).resized(horizontalScale: 0.25, verticalScale: 0.25, kernel: .lanczos3)
            .rendered()
        var settings = EncoderSettings(format: .jpeg, strip: true)
        settings.qualityTarget = QualityTarget(ssimulacra2: 75, min: 10, max: 100)
        let time = Locked(0.0)
        let deadline = VipsDeadline(seconds: 10, clock: .init { time.withLock { $0 } })
        defer { deadline.cancel() }
        // Given a search of an image in memory, made from one a deadline watches
        #expect {
            try deadline.watching(image) { watched in
                // When the deadline's time runs out before the search starts
                time.withLock { $0 = 11 }
                #expect(deadline.hasRunOut)
                // Then it stops before its first trial
                _ = try QualitySearch.run(image, settings: settings, stoppedWith: watched)
            }
        } throws: { error in
            (error as? VipsError)?.operation == "kill"
        }
        // while with time to spare it makes its file
        let outcome = try VipsDeadline(seconds: 60).watching(image) { watched in
            try QualitySearch.run(image, settings: settings, stoppedWith: watched)
        }
        #expect(outcome.reached && outcome.encodes >= 1)
    }

    /// SSIMULACRA 2 has no score for an image under 8 pixels a side; such an image is scored
    /// stretched along its short sides, and the target still chooses its quality.
    @Test(arguments: [(1, 1), (640, 1), (3, 5)])
    func anImageUnderEightPixelsASideGetsAQualityItsTargetChose(width: Int, height: Int) throws {
        let image = try Fixtures.noise(width: width, height: height)
        #expect(throws: VipsError.self) { try SSIMULACRA2(original: image) }
        var settings = EncoderSettings(format: .webp, strip: true)
        settings.qualityTarget = QualityTarget(ssimulacra2: 70, min: 10, max: 100)
        let outcome = try QualitySearch.run(image, settings: settings)
        #expect(outcome.score.isFinite && (10...100).contains(outcome.quality), "\(outcome.quality), \(outcome.score)")
        let written = try VipsImage.open(data: outcome.data)
        #expect(written.size == ImageSize(width: width, height: height))
        // The score is that of the images enlarged along their short sides to 113 pixels
        let scored = (try QualitySearch.Scorer.scored(image), try QualitySearch.Scorer.scored(written))
        #expect(scored.0.width == max(width, 113) && scored.0.height == max(height, 113))
        #expect(QualitySearch.Scorer.enlargement(of: 640) == 1 && QualitySearch.Scorer.enlargement(of: 113) == 1)
        #expect(QualitySearch.Scorer.enlargement(of: 112) == 113.0 / 112)
        #expect(abs(try SSIMULACRA2.score(original: scored.0, distorted: scored.1) - outcome.score) < 1e-9)
    }

    /// A thumbnail with a side under 113 pixels, which the metric sees fewer scales of, is
    /// scored enlarged: its target is reached below the highest quality, near where one a pixel
    /// larger's is.
    @Test func aThumbnailUnder113PixelsReachesItsTarget() throws {
        let photo = try VipsImage.open(file: Self.photo.path)
        var settings = EncoderSettings(format: .webp, strip: true)
        settings.qualityTarget = QualityTarget(ssimulacra2: 75, min: 10, max: 100)
        var qualities: [Int] = []
        for side in [112, 113] {
            let thumbnail = try photo.resampled(to: ImageSize(width: side, height: side))
            let outcome = try QualitySearch.run(thumbnail, settings: settings)
            #expect(outcome.reached && outcome.quality < 100, "\(side): \(outcome.quality), \(outcome.score)")
            qualities.append(outcome.quality)
        }
        #expect(abs(qualities[0] - qualities[1]) <= 8, "\(qualities)")
    }

    /// libvips 8.14 gives libjxl no distance it takes below quality 5, and libjxl then encodes
    /// at its default: a JPEG XL is made at 5 at least, and a search chooses no lower quality.
    @Test func aJPEGXLIsMadeAtQualityFiveAtLeastAndSearchedNoLower() throws {
        let image = try VipsImage.open(file: Self.photo.path).resized(horizontalScale: 0.2, verticalScale: 0.2, kernel: .lanczos3)
        let bytes = { (quality: Int) throws(VipsError) -> Data in
            try ImageEncoder.savedBytes(image, with: EncoderSettings(format: .jxl, quality: quality, strip: true, effort: 3))
        }
        #expect(try bytes(3) == bytes(5))
        #expect(try bytes(1).count < bytes(90).count)
        var settings = EncoderSettings(format: .jxl, strip: true, effort: 3)
        settings.qualityTarget = QualityTarget(ssimulacra2: 30, min: 1, max: 100)
        let outcome = try QualitySearch.run(image, settings: settings)
        let chosen = try bytes(outcome.quality)
        #expect(outcome.quality >= 5 && outcome.data == chosen, "quality \(outcome.quality)")
    }

    /// AVIF files may be wider than the 16,384 pixels libheif reads from a file it does not
    /// trust; the trials are the encoder's own, and are scored all the same.
    @Test func anAVIFTrialWiderThanLibheifReadsFromAHostileFileIsScored() throws {
        let format = EncoderSettings.Format.avif
        let image = try Fixtures.gradient(width: 17_000, height: 16)
        #expect(throws: VipsError.self, "libheif reads such a file by default now: the test proves nothing") {
            try VipsImage.open(data: try QualitySearch.trialBytes(image, settings: EncoderSettings(format: format, effort: 0), quality: 50))
        }
        var settings = EncoderSettings(format: format, strip: true, effort: 0)
        settings.qualityTarget = QualityTarget(ssimulacra2: 60, min: 10, max: 100)
        let outcome = try QualitySearch.run(image, settings: settings)
        #expect(outcome.encodes >= 1 && outcome.score > 0)
        #expect(try QualitySearch.decodedTrial(outcome.data, format: format).size == image.size)
    }

    /// Scores that rise in a line with quality end the search at the lowest passing quality in
    /// 2 trials from a first guess on either side when they rise at the format's typical slope,
    /// and in 3 when they do not: the search goes where the line meets the target instead of
    /// halving its way there (which takes 6 from a guess 16 off), and a pass the line puts
    /// within 2 steps of the target needs no failing trial below it.
    @Test(arguments: [(0.4, 80), (0.4, 50), (0.7, 75), (0.25, 55)])
    func aBracketFollowsTheScoresToTheTarget(slope: Double, guess: Int) {
        let typical = QualitySearch.typicalSlope(.jpeg)
        // Reaches 75 between 63 and 64: 64 is the lowest passing quality.
        func score(_ quality: Int) -> Double { 75 + slope * (Double(quality) - 63.6) }
        var bracket = QualitySearch.Bracket(target: QualityTarget(ssimulacra2: 75), format: .jpeg)
        var quality = guess
        var trials = 0
        while trials < QualitySearch.maximumEncodes {
            bracket.add(quality: quality, score: score(quality))
            trials += 1
            guard let next = bracket.next() else { break }
            quality = next
        }
        #expect(bracket.passing?.quality == 64, "\(bracket.trials)")
        let closed = (bracket.passing?.quality ?? 0) - (bracket.failing?.quality ?? 0) <= QualitySearch.closeEnough(for: .jpeg)
        let close = (bracket.passing?.score ?? .infinity) - 75 <= min(2 * slope, QualitySearch.closeScore)
        #expect(closed || close, "\(bracket.trials)")
        #expect(trials <= (slope == typical ? 2 : 3), "\(bracket.trials)")
    }

    /// A target only the highest quality allowed reaches is found, however close below it the
    /// trials that fell short were: the search does not give up one step short of it.
    @Test(arguments: [99, 98])
    func aTargetOnlyTheHighestQualityReachesIsFound(lastFailing: Int) {
        var bracket = QualitySearch.Bracket(target: QualityTarget(ssimulacra2: 97), format: .jpeg)
        bracket.add(quality: 90, score: 94)
        bracket.add(quality: lastFailing, score: 96.5)
        #expect(bracket.next() == 100, "\(bracket.trials)")
        bracket.add(quality: 100, score: 97.1)
        #expect(bracket.next() == nil)
        #expect(bracket.passing?.quality == 100)
        // and past the highest allowed, it ends
        var capped = QualitySearch.Bracket(target: QualityTarget(ssimulacra2: 97, max: lastFailing), format: .jpeg)
        capped.add(quality: lastFailing, score: 96.5)
        #expect(capped.next() == nil)
    }

    /// A target no quality within the bounds reaches gives the best file and says so.
    @Test func anUnreachableTargetGivesTheBestFileAndAWarning() async throws {
        let directory = try setUp()
        let (reports, summary) = try await PipelineHarness.run(
            json(#"{"format": "jpeg", "quality": {"ssimulacra2": 99, "max": 60}}"#), in: directory)
        #expect(summary.succeeded == 1)
        let written = try #require(reports.first?.written.first)
        let searched = try #require(written.searchedQuality)
        #expect(searched.quality == 60 && !searched.reached)
        #expect(written.warnings.contains { $0.contains("short of the target 99") }, "\(written.warnings)")
        // Naming the file, which tells one width or art crop of an output from another
        let name = (written.path as NSString).lastPathComponent
        #expect(
            written.warnings.contains { $0.hasSuffix("; the file written, \(name), is the best the search found") }, "\(written.warnings)")
    }

    // MARK: Recording and remembering

    @Test func theChoiceIsReportedAndAnUnchangedRunEncodesNothing() async throws {
        let directory = try setUp()
        let text = json(#"{"format": "webp", "quality": {"ssimulacra2": 70}}"#, extension: "webp")
        let (reports, first) = try await PipelineHarness.run(text, in: directory)
        #expect(first.outputsWritten == 1)
        let written = try #require(reports.first?.written.first?.searchedQuality)
        #expect(written.reached && (1...100).contains(written.quality))
        #expect(try VipsImage.open(file: directory.path + "/out/storm.webp").width == 400)
        // Unchanged: nothing is encoded, and the journal still knows the choice.
        let (again, second) = try await PipelineHarness.run(text, in: directory)
        #expect(second.outputsWritten == 0 && second.outputsUpToDate == 1)
        #expect(again.first?.written.first?.searchedQuality == written)
        // A changed target searches again.
        let (_, third) = try await PipelineHarness.run(
            json(#"{"format": "webp", "quality": {"ssimulacra2": 80}}"#, extension: "webp"), in: directory)
        #expect(third.outputsWritten == 1)
    }

    @Test func aScoreShortOfItsTargetIsWrittenWithThePlacesThatTellThemApart() {
        #expect(96.9637.formatted(places: 1, apartFrom: 96.97) == ("96.96", "96.97"))
        #expect(80.04.formatted(places: 1, apartFrom: 85) == ("80", "85"))
    }
}
