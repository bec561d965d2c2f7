import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Searches that start near the answer: from the quality the journal remembers for the output,
/// the one a neighbouring width chose, or, for AVIF, a pilot search at the fastest speed.
@Suite struct QualitySearchStartTests {
    static let photo = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/samples/storm.jpg")

    /// A search told where the last one ended makes fewer trial encodes than one that guesses
    /// from the image, and chooses the same quality within the search's tolerance: checked for
    /// the targets whose guessed search takes 3 trials or more (one that guesses right has
    /// nothing to save).
    @Test(arguments: [EncoderSettings.Format.jpeg, .webp])
    func aSearchFromAKnownQualityMakesFewerTrials(format: EncoderSettings.Format) throws {
        let image = try VipsImage.open(file: Self.photo.path).resized(horizontalScale: 0.25, verticalScale: 0.25, kernel: .lanczos3)
        var compared = 0
        for score in [55.0, 65, 75, 85, 92] {
            var settings = EncoderSettings(format: format, strip: true)
            settings.qualityTarget = QualityTarget(ssimulacra2: score, min: 10, max: 100)
            let fresh = try QualitySearch.run(image, settings: settings)
            guard fresh.reached, fresh.encodes >= 3 else { continue }
            compared += 1
            settings.qualityTarget?.start = fresh.quality
            let started = try QualitySearch.run(image, settings: settings)
            #expect(started.reached)
            #expect(
                started.encodes < fresh.encodes,
                "\(format) \(score): \(started.encodes) trials from \(fresh.quality), \(fresh.encodes) fresh")
            #expect(
                abs(started.quality - fresh.quality) <= QualitySearch.closeEnough(for: format), "\(started.quality), fresh \(fresh.quality)"
            )
        }
        #expect(compared > 0, "no target made a guessed \(format) search take 3 trials")
    }

    /// A cold AVIF search first searches at aom's fastest speed, and starts from that answer
    /// less `pilotGap`: over several targets it makes fewer trial encodes at the default effort
    /// than searches started from the guess the image's detail makes, and chooses as they do
    /// within two brackets' width.
    @Test func aColdAVIFSearchStartsFromAPilotAtTheFastestSpeed() throws {
        let image = try VipsImage.open(file: Self.photo.path).resized(horizontalScale: 0.25, verticalScale: 0.25, kernel: .lanczos3)
        var piloted = 0
        var guessed = 0
        for score in [60.0, 70, 80, 88] {
            var settings = EncoderSettings(format: .avif, strip: true)
            let target = QualityTarget(ssimulacra2: score, min: 10, max: 100)
            settings.qualityTarget = target
            let cold = try QualitySearch.run(image, settings: settings)
            settings.qualityTarget?.start = try QualitySearch.firstGuess(image, format: .avif, target: target)
            let fromGuess = try QualitySearch.run(image, settings: settings)
            piloted += cold.encodes
            guessed += fromGuess.encodes
            #expect(cold.reached && fromGuess.reached, "target \(score)")
            #expect(
                abs(cold.quality - fromGuess.quality) <= 2 * QualitySearch.closeEnough(for: .avif),
                "target \(score): \(cold.quality) after a pilot, \(fromGuess.quality) from the guess")
        }
        #expect(piloted < guessed, "\(piloted) trials after pilots, \(guessed) from guesses")
    }

    /// The journal remembers the chosen quality for the output's planned path, which a forced
    /// run starts from, and that run chooses as a fresh search did.
    @Test func aForcedRunStartsFromTheQualityTheJournalRemembers() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Data(contentsOf: Self.photo), to: "in/storm.jpg")
        let text = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [
                #"{"name": "web", "steps": [{"resize": {"width": 300}}], "encode": {"format": "webp", "quality": {"ssimulacra2": 80}}, "path": "out/{stem}.webp"}"#
            ])
        let (reports, _) = try await PipelineHarness.run(text, in: directory)
        let first = try #require(reports.first?.written.first?.searchedQuality)
        let pipeline = try PipelineHarness.pipeline(text, in: directory)
        let definition = pipeline.definition
        let journal = OutputJournal(
            file: definition.cache.journalFile(pipeline: definition.name, baseDirectory: definition.baseDirectory), definition: definition)
        let planned = try #require(reports.first?.written.first?.path)
        #expect(journal.rememberedQuality(planned, target: 80) == first.quality)
        // (a quality found for another score is no start)
        #expect(journal.rememberedQuality(planned, target: 75) == nil)
        let forced = try await pipeline.run(force: true).collect()
        let second = try #require(forced.reports.first?.written.first?.searchedQuality)
        #expect(second.reached && abs(second.quality - first.quality) <= QualitySearch.closeEnough(for: .webp), "\(second), first \(first)")
    }

    /// A search whose trials all fall short tries `max` before it gives up: a 4-pixel-wide
    /// photo's scores jump between qualities, and from some starts (a neighbouring width's
    /// choice) six trials ended far short of a target `max` reaches.
    @Test func aSearchWhoseTrialsAllFallShortTriesTheHighestQualityAllowed() async throws {
        // The photo as a run makes it 4 pixels wide, kept whole as PNG.
        let directory = try TemporaryDirectory()
        try directory.write(try Data(contentsOf: Self.photo), to: "in/storm.jpg")
        let text = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [#"{"name": "tiny", "widths": [4], "formats": ["png"], "path": "out/{stem}.png"}"#])
        _ = try await PipelineHarness.run(text, in: directory)
        let image = try VipsImage.open(file: directory.path + "/out/storm.png")
        var settings = EncoderSettings(format: .jpeg, strip: true)
        settings.qualityTarget = QualityTarget(ssimulacra2: 80, min: 100, max: 100)
        let highest = try QualitySearch.run(image, settings: settings)
        try #require(highest.score >= 80, "the test needs a target quality 100 reaches: \(highest.score)")
        settings.qualityTarget = QualityTarget(ssimulacra2: 80, min: 1, max: 100)
        var shortOf: [Int: Double] = [:]
        for start in 1...100 {
            settings.qualityTarget?.start = start
            let outcome = try QualitySearch.run(image, settings: settings)
            if !outcome.reached { shortOf[start] = outcome.score }
        }
        #expect(shortOf.isEmpty, "short of the target from these starts, with these scores: \(shortOf)")
    }

    /// An output named by its hash searches from the image alone, not from the quality the
    /// journal remembers nor a neighbouring width's: a search stops anywhere within its
    /// tolerance, so where it starts would choose the file, and so its name. Here a run at another
    /// target left its qualities in the journal, which a plain output's search starts from.
    @Test func anOutputNamedByItsHashIsMadeAsAFreshRunMakesIt() async throws {
        let (earlier, fresh) = (try TemporaryDirectory(), try TemporaryDirectory())
        for folder in [earlier, fresh] { try folder.write(try Data(contentsOf: Self.photo), to: "in/storm.jpg") }
        func json(target: Int) -> String {
            PipelineHarness.json(
                inputs: ["in/*.jpg"],
                outputs: [
                    #"{"name": "set", "widths": [160, 240, 320, 400], "formats": [{"format": "webp", "quality": {"ssimulacra2": \#(target)}}], "path": "out/{stem}-{width}.{hash}.webp"}"#
                ])
        }
        func names(_ reports: [ItemReport]) -> [String] {
            reports.flatMap(\.written).map { ($0.path as NSString).lastPathComponent }.sorted()
        }
        _ = try await PipelineHarness.run(json(target: 60), in: earlier)
        let (remade, _) = try await PipelineHarness.run(json(target: 80), in: earlier)
        let (made, _) = try await PipelineHarness.run(json(target: 80), in: fresh)
        #expect(names(remade).count == 4)
        #expect(names(remade) == names(made))
    }

    /// A run after one at another target makes each file as a fresh run makes it: a search from
    /// the quality found for the other score can end elsewhere within its tolerance, with chroma
    /// kept whole where a fresh search keeps 4:2:0, and the file larger.
    @Test func aQualityFoundForAnotherTargetIsNoStart() async throws {
        let (earlier, fresh) = (try TemporaryDirectory(), try TemporaryDirectory())
        let samples = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/samples")
        let names = try FileManager.default.contentsOfDirectory(atPath: samples.path).filter { $0.hasSuffix(".jpg") }.sorted()
        for folder in [earlier, fresh] {
            for name in names { try folder.write(try Data(contentsOf: samples.appendingPathComponent(name)), to: "in/\(name)") }
        }
        func json(target: Int) -> String {
            PipelineHarness.json(
                inputs: ["in/*.jpg"],
                outputs: [
                    #"{"name": "web", "steps": [{"resize": {"width": 500}}], "encode": {"format": "jpeg", "quality": {"ssimulacra2": \#(target)}}, "path": "out/{stem}.jpg"}"#
                ])
        }
        _ = try await PipelineHarness.run(json(target: 75), in: earlier)
        _ = try await PipelineHarness.run(json(target: 80), in: earlier)
        _ = try await PipelineHarness.run(json(target: 80), in: fresh)
        for name in names {
            let (remade, made) = (earlier.url.appendingPathComponent("out/\(name)"), fresh.url.appendingPathComponent("out/\(name)"))
            #expect(try Data(contentsOf: remade) == Data(contentsOf: made), "\(name)")
        }
    }
}
