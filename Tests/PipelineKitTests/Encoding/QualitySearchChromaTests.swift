import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Searches for images whose colour 4:2:0 subsampling alone costs most of the target: JPEG and
/// AVIF trials go on with chroma kept whole, and photographs are searched as before.
@Suite struct QualitySearchChromaTests {
    static let photo = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/samples/storm.jpg")
    static let target = 75.0

    /// Fine stripes of two colours of nearly the same lightness over a gentle gradient: the
    /// detail is in the chroma, which 4:2:0 halves.
    static func colourStripes() throws -> VipsImage {
        try Fixtures.image(width: 256, height: 192, bands: 3) { x, y in
            let shade = UInt8(60 + y / 4)
            return (x / 2 + y / 3) % 2 == 0 ? [170, shade, 90] : [70, shade + 40, 150]
        }
    }

    static func settings(_ format: EncoderSettings.Format) -> EncoderSettings {
        var settings = EncoderSettings(format: format, strip: true)
        settings.qualityTarget = QualityTarget(ssimulacra2: target)
        return settings
    }

    @Test func subsamplingAloneCostsStripesTheTargetAndAPhotoLittle() throws {
        let stripes = try Self.colourStripes()
        let stripesCeiling = try #require(try QualitySearch.subsampledChromaScore(stripes, metric: QualitySearch.Scorer(original: stripes)))
        #expect(stripesCeiling < Self.target + QualitySearch.subsampledChromaMargin, "\(stripesCeiling)")

        let photo = try VipsImage.open(file: Self.photo.path).resized(horizontalScale: 0.25, verticalScale: 0.25, kernel: .lanczos3)
            .rendered()
        let photoCeiling = try #require(try QualitySearch.subsampledChromaScore(photo, metric: QualitySearch.Scorer(original: photo)))
        #expect(photoCeiling >= Self.target + QualitySearch.subsampledChromaMargin, "\(photoCeiling)")

        // No colour, no check: a grey image and one with alpha are searched as before.
        #expect(
            try QualitySearch.subsampledChromaScore(try photo.converted(to: .blackAndWhite), metric: QualitySearch.Scorer(original: photo))
                == nil)
        let withAlpha = try Fixtures.image(width: 32, height: 32, bands: 4) { _, _ in [10, 20, 30, 128] }
        #expect(try QualitySearch.subsampledChromaScore(withAlpha, metric: QualitySearch.Scorer(original: withAlpha)) == nil)
    }

    /// Below the quality where a trial turns to 4:4:4 by itself (JPEG 85, AVIF 90), no
    /// subsampled file reaches the target; the search finds one with whole chroma below it.
    @Test(arguments: [(EncoderSettings.Format.jpeg, 85), (.avif, 90)])
    func colourStripesKeepChromaWholeBelowTheEncodersOwnSwitch(format: EncoderSettings.Format, switchQuality: Int) throws {
        let stripes = try Self.colourStripes()
        let metric = try SSIMULACRA2(original: stripes)
        let subsampled = try QualitySearch.trialBytes(stripes, settings: Self.settings(format), quality: switchQuality - 1)
        #expect(try metric.score(try VipsImage.open(data: subsampled)) < Self.target)

        let outcome = try QualitySearch.run(stripes, settings: Self.settings(format))
        #expect(outcome.reached)
        #expect(outcome.quality < switchQuality, "quality \(outcome.quality)")
        if format == .jpeg {
            #expect(try VipsImage.open(data: outcome.data).stringField("jpeg-chroma-subsample") == "4:4:4")
        }
    }

    /// A cold AVIF search's pilot makes the chroma check for the search, and the search keeps
    /// what it learnt: its own trials start near the answer, where they may never fall short
    /// enough to make the check.
    @Test func anAVIFPilotHandsWhatItLearntOfChromaToTheSearch() throws {
        let target = QualityTarget(ssimulacra2: Self.target)
        // Stripes, from a guess far too low: the pilot turns chroma whole, for the search too
        let stripes = try Self.colourStripes()
        var stripesCourse = QualitySearch.Course(settings: Self.settings(.avif), target: target)
        _ = try QualitySearch.pilotStart(stripes, course: &stripesCourse, metric: try QualitySearch.Scorer(original: stripes), from: 20)
        #expect(stripesCourse.settings.chromaSubsampling == .subsample444)
        #expect(!stripesCourse.chromaUnchecked)
        // A photograph, from as low: checked, and left subsampled
        let photo = try VipsImage.open(file: Self.photo.path).resized(horizontalScale: 0.25, verticalScale: 0.25, kernel: .lanczos3)
            .rendered()
        var photoCourse = QualitySearch.Course(settings: Self.settings(.avif), target: target)
        _ = try QualitySearch.pilotStart(photo, course: &photoCourse, metric: try QualitySearch.Scorer(original: photo), from: 20)
        #expect(photoCourse.settings.chromaSubsampling == .auto)
        #expect(!photoCourse.chromaUnchecked)
    }

    /// A photograph's JPEG below quality 85 stays subsampled: its search never turns.
    @Test func aPhotographsJPEGStaysSubsampled() throws {
        let photo = try VipsImage.open(file: Self.photo.path).resized(horizontalScale: 0.25, verticalScale: 0.25, kernel: .lanczos3)
        let outcome = try QualitySearch.run(photo, settings: Self.settings(.jpeg))
        #expect(outcome.reached)
        try #require(outcome.quality < 85, "the photograph needs quality \(outcome.quality); the check means nothing there")
        #expect(try VipsImage.open(data: outcome.data).stringField("jpeg-chroma-subsample") == "4:2:0")
    }

    /// `chromaSubsampling` is an AVIF option too: 4:4:4 at any quality, 4:2:0 even from 90.
    @Test func avifChromaSubsamplingIsTheFilesChoice() async throws {
        var settings = EncoderSettings(format: .avif, quality: 50)
        #expect(!AVIFOutput.encoding(settings).fullChroma)
        settings.chromaSubsampling = .subsample444
        #expect(AVIFOutput.encoding(settings).fullChroma)
        settings.quality = 95
        settings.chromaSubsampling = .subsample420
        #expect(!AVIFOutput.encoding(settings).fullChroma)
        settings.chromaSubsampling = .auto
        #expect(AVIFOutput.encoding(settings).fullChroma)

        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Self.colourStripes()), to: "in/stripes.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "a", "encode": {"format": "avif", "quality": 60, "chromaSubsampling": "4:4:4"}, "path": "out/{stem}.avif"}"#
            ])
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.succeeded == 1 && summary.outputsWritten == 1, "\(reports)")
    }
}
