import Foundation
import TestSupport
import Testing
import Vips

/// `pipeline watch` after a run it could not start: a pipeline file whose plan failed is read
/// again at the next change, which may have mended it; a run refused because another pipeline
/// file's run is writing the same outputs starts once that run has finished.
@Suite(.serialized) struct WatchRecoveryCommandTests {
    static func output(width: Int) -> String {
        #"{"name": "small", "steps": [{"resize": {"width": \#(width)}}], "encode": {"format": "webp"}, "path": "out/{stem}-small.webp"}"#
    }

    /// Waits for the next run line on standard output after line `mark`.
    func runLine(_ command: BackgroundCommand, after mark: Int) throws -> String {
        let line = command.waitForLine(after: mark, timeout: 180) {
            !$0.isError && ($0.text.hasPrefix("run: ") || $0.text.hasPrefix("re-run "))
        }
        return try #require(line?.text, "no run line came:\n\(command.transcript)")
    }

    /// `pipeline watch p.json` in `directory`, once its first run is done.
    func watchAfterItsFirstRun(_ directory: TemporaryDirectory) throws -> BackgroundCommand {
        let command = try BackgroundCommand(["watch", "--debounce", "300ms", "p.json"], in: directory.url)
        do {
            _ = try runLine(command, after: 0)
        } catch {
            command.kill()
            throw error
        }
        return command
    }

    /// Writes `json` as the pipeline file, and waits for the watch to refuse it and keep the last valid one.
    func edit(_ directory: TemporaryDirectory, to json: String, watchedBy command: BackgroundCommand) throws {
        let mark = command.lineCount
        try directory.write(Data(json.utf8), to: "p.json")
        let kept = command.waitForLine(after: mark) { $0.isError && $0.text.contains("keeping the last valid pipeline") }
        #expect(kept != nil, "\(command.transcript)")
    }

    /// Waits for the next run after line `mark`, a re-run, and checks that it made `output` `width` pixels wide.
    func expectReRun(of command: BackgroundCommand, after mark: Int, making output: String, width: Int, in directory: TemporaryDirectory)
        throws
    {
        let line = try runLine(command, after: mark)
        #expect(line.hasPrefix("re-run ("), "\(command.transcript)")
        let made = try VipsImage.open(data: try Data(contentsOf: directory.url.appendingPathComponent(output)))
        #expect(made.width == width, "\(command.transcript)")
    }

    @Test func aPipelineFileWhosePlanFailedIsUsedOnceAChangeToTheInputsMendsIt() throws {
        // Given a watch of in/*.jpg, and a photo of the same stem in a subfolder it does not read
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [Self.output(width: 16)], inputPattern: "in/*.jpg")
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/sub/p0.jpg")
        let command = try watchAfterItsFirstRun(directory)
        defer { command.kill() }

        // When the file is edited to read in/**/*.jpg at another width, which clashes (two p0s)
        try edit(directory, to: PipelineHarness.json(inputs: ["in/**/*.jpg"], outputs: [Self.output(width: 24)]), watchedBy: command)
        // and the clash is mended by removing the photo in in/, which the last valid pipeline reads
        let mark = command.lineCount
        try FileManager.default.removeItem(atPath: directory.path + "/in/p0.jpg")

        // Then the next run is of the file as it is now: the new width
        try expectReRun(of: command, after: mark, making: "out/p0-small.webp", width: 24, in: directory)
    }

    @Test func aPipelineFileEditedToReadAFolderNotMadeYetIsUsedOnceThatFolderHasAPhoto() throws {
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [Self.output(width: 16)], inputPattern: "in/*.jpg")
        let command = try watchAfterItsFirstRun(directory)
        defer { command.kill() }

        // When the file is edited to read later/*.jpg, a folder that is not there: no input
        try edit(directory, to: PipelineHarness.json(inputs: ["later/*.jpg"], outputs: [Self.output(width: 24)]), watchedBy: command)
        // and that folder is made, then given a photo
        let mark = command.lineCount
        try FileManager.default.createDirectory(atPath: directory.path + "/later", withIntermediateDirectories: false)
        try FileManager.default.moveItem(atPath: directory.path + "/spare/photo.jpg", toPath: directory.path + "/later/photo.jpg")

        // Then the file as it is now runs: the photo in the new folder, at the new width
        try expectReRun(of: command, after: mark, making: "out/photo-small.webp", width: 24, in: directory)
    }

    @Test func aPipelineFileEditedToNameAnOverlayNotInPlaceYetIsUsedOnceTheOverlayIsThere() throws {
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [Self.output(width: 16)], inputPattern: "in/*.jpg")
        let command = try watchAfterItsFirstRun(directory)
        defer { command.kill() }

        // When the file is edited to lay marks/logo.png over the photo, in a folder not made yet
        let mark = command.lineCount
        let output =
            #"{"name": "small", "steps": [{"resize": {"width": 24}}, {"composite": {"image": "marks/logo.png"}}], "#
            + #""encode": {"format": "webp"}, "path": "out/{stem}-small.webp"}"#
        try edit(directory, to: PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output]), watchedBy: command)
        #expect(command.waitForLine(after: mark) { $0.isError && $0.text.contains("no such file") } != nil, "\(command.transcript)")
        // and the overlay is then put there
        let placed = command.lineCount
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 8, height: 8)), to: "marks/logo.png")

        // Then the file as it is now runs, at its width
        try expectReRun(of: command, after: placed, making: "out/p0-small.webp", width: 24, in: directory)
    }

    @Test func aChangeThatOnlyConcernsTheFailingFileRunsNothing() throws {
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [Self.output(width: 16)], inputPattern: "in/*.jpg")
        let command = try watchAfterItsFirstRun(directory)
        defer { command.kill() }

        // When the file is edited to lay two overlays, neither in place yet
        let output =
            #"{"name": "small", "steps": [{"resize": {"width": 24}}, {"composite": {"image": "marks/a.png"}}, "#
            + #"{"composite": {"image": "marks/b.png"}}], "encode": {"format": "webp"}, "path": "out/{stem}-small.webp"}"#
        try edit(directory, to: PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output]), watchedBy: command)
        // and the first is put there, which the last valid pipeline does not read
        let overlay = try Fixtures.png(try Fixtures.gradient(width: 8, height: 8))
        let first = command.lineCount
        try directory.write(overlay, to: "marks/a.png")

        // Then the file is read again and refused, and nothing runs
        #expect(command.waitForLine(after: first) { $0.isError && $0.text.contains("marks/b.png") } != nil, "\(command.transcript)")
        #expect(command.waitForLine(after: first, timeout: 3) { $0.text.hasPrefix("re-run") } == nil, "\(command.transcript)")
        // and once the second is there, the file as it is now runs
        let second = command.lineCount
        try directory.write(overlay, to: "marks/b.png")
        try expectReRun(of: command, after: second, making: "out/p0-small.webp", width: 24, in: directory)
    }

    @Test func aFileThatFailsOverFilesAlreadyThereIsReadOnceNotAgainForThem() throws {
        // Given a watch, and photos/ holding two photos of one stem, a clash for one output
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [Self.output(width: 16)], inputPattern: "in/*.jpg")
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32))
        for name in ["photos/a.jpg", "photos/sub/a.jpg"] { try directory.write(photo, to: name) }
        let command = try watchAfterItsFirstRun(directory)
        defer { command.kill() }

        // When the file is edited to read them
        let mark = command.lineCount
        try edit(directory, to: PipelineHarness.json(inputs: ["photos/**/*.jpg"], outputs: [Self.output(width: 24)]), watchedBy: command)

        // Then the refusal is said once: the folders now watched for the file hold nothing new
        // that could mend it, so nothing reads it again nor runs
        #expect(command.waitForLine(after: mark, timeout: 3) { $0.text.hasPrefix("re-run") } == nil, "\(command.transcript)")
        let refusals = command.transcript.components(separatedBy: "keeping the last valid pipeline").count - 1
        #expect(refusals == 1, "\(command.transcript)")
    }

    @Test func aReRunRefusedForAnotherPipelinesRunStartsOnceThatRunHasFinished() throws {
        // Given a watch of p.json, and q.json writing the same outputs of many large photos
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [Self.output(width: 16)], inputPattern: "in/*.jpg")
        let large = try Fixtures.jpeg(try Fixtures.gradient(width: 2000, height: 1500))
        for index in 1..<40 { try directory.write(large, to: "in/p\(index).jpg") }
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.output(width: 20)], extra: #""name": "another""#)
        try directory.write(Data(json.utf8), to: "q.json")
        let command = try watchAfterItsFirstRun(directory)
        defer { command.kill() }

        // When q.json runs, and a photo is added while it does
        let other = try BackgroundCommand(["run", "--verbose", "q.json"], in: directory.url)
        defer { other.kill() }
        #expect(other.waitForLine(timeout: 180) { !$0.isError && $0.text.hasPrefix("wrote ") } != nil, "\(other.transcript)")
        let mark = command.lineCount
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/new.jpg")

        // Then the watch says it waits, not that the plan fails, and runs once q.json has finished
        let said = command.waitForLine(after: mark, timeout: 180) { $0.isError && $0.text.hasPrefix("re-run waits (") }
        #expect(other.waitForExit(timeout: 300) == 0, "\(other.transcript)")
        #expect(said != nil, "q.json finished before the watch tried: \(command.transcript)")
        #expect(!command.transcript.contains("no re-run"), "\(command.transcript)")
        _ = try runLine(command, after: mark)
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/new-small.webp"), "\(command.transcript)")
    }

    /// Outputs written beside the inputs: a photo added there is a change, not taken for an
    /// output because its name has a hyphen where the template has one.
    @Test func aPhotoAddedBesideTheOutputsIsMade() throws {
        let output = #"{"name": "t", "widths": [16], "formats": ["webp"], "path": "in/{stem}-{width}.{format}"}"#
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [output], inputPattern: "in/*.jpg")
        let command = try watchAfterItsFirstRun(directory)
        defer { command.kill() }

        let mark = command.lineCount
        try FileManager.default.copyItem(atPath: directory.path + "/spare/photo.jpg", toPath: directory.path + "/in/dune-sunset.jpg")
        let line = try runLine(command, after: mark)
        #expect(line.hasPrefix("re-run ("), "\(command.transcript)")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/in/dune-sunset-16.webp"), "\(command.transcript)")
    }

    /// An ICC profile an output embeds is checked again when it changes, as the pipeline file is.
    @Test func aProfileReplacedByOneThatIsNotIsRefusedAndTheLastValidPipelineKept() throws {
        let output = #"{"name": "i", "encode": {"format": "jpeg", "iccProfile": "icc/brand.icc"}, "path": "out/{stem}.jpg"}"#
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [output], inputPattern: "in/*.jpg")
        let profile = ICCFixtures.profile(primaries: ICCFixtures.adobePrimaries, curve: ICCFixtures.gammaCurve(2.2))
        try directory.write(Data(profile), to: "icc/brand.icc")
        let command = try watchAfterItsFirstRun(directory)
        defer { command.kill() }

        let mark = command.lineCount
        try directory.write(Data("not a profile".utf8), to: "icc/brand.icc")
        #expect(
            command.waitForLine(after: mark) { $0.isError && $0.text.contains("encode.iccProfile") } != nil, "\(command.transcript)")
        #expect(command.waitForLine(after: mark) { $0.isError && $0.text.contains("keeping the last valid pipeline") } != nil)

        // When the profile is then a FIFO, with no writer, and an input is added
        try FileManager.default.removeItem(atPath: directory.path + "/icc/brand.icc")
        #expect(mkfifo(directory.path + "/icc/brand.icc", 0o600) == 0)
        let fifo = command.lineCount
        try FileManager.default.moveItem(atPath: directory.path + "/spare/photo.jpg", toPath: directory.path + "/in/added.jpg")
        // Then the re-run ends, every input failing at encode (the profile's change makes the
        // first again too), named with what stands there: the last valid pipeline names that
        // path, and libvips' open of a FIFO would never return
        let line = try runLine(command, after: fifo)
        #expect(line.contains("2 inputs, 0 succeeded, 2 failed"), "\(line)\n\(command.transcript)")
        #expect(
            command.waitForLine(after: fifo) { $0.isError && $0.text.contains("a FIFO (named pipe), not a regular file") } != nil,
            "\(command.transcript)")
    }

    /// Deploys replace the pipeline file's folder whole: by two renames (`mv conf.new conf`), or
    /// removed and made again around a watch started in it with a relative name. Either way the
    /// file is read again, where it is now.
    @Test(arguments: [false, true])
    func aPipelineFilesFolderReplacedIsReadWhereItIsNow(removedAroundTheWatch: Bool) throws {
        // Given photos in `photos/in` and the pipeline file in `conf`, whose own parent nothing
        // else watched: a watch of it from the parent, or from within `conf`
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "photos/in/a.jpg")
        let file = { (width: Int) in PipelineHarness.json(inputs: ["../photos/in/*.jpg"], outputs: [Self.output(width: width)]) }
        try directory.write(Data(file(16).utf8), to: "conf/p.json")
        let command =
            removedAroundTheWatch
            ? try BackgroundCommand(["watch", "--debounce", "300ms", "p.json"], in: directory.url.appendingPathComponent("conf"))
            : try BackgroundCommand(["watch", "--debounce", "300ms", "conf/p.json"], in: directory.url)
        defer { command.kill() }
        #expect(try runLine(command, after: 0).hasPrefix("run: "))
        #expect(try VipsImage.open(file: directory.path + "/conf/out/a-small.webp").width == 16)

        // When a folder with a file asking for 24 px takes its place
        let mark = command.lineCount
        try directory.write(Data(file(24).utf8), to: "conf.new/p.json")
        if removedAroundTheWatch {
            try FileManager.default.removeItem(atPath: directory.path + "/conf")
        } else {
            try #require(rename(directory.path + "/conf", directory.path + "/conf.old") == 0)
        }
        try #require(rename(directory.path + "/conf.new", directory.path + "/conf") == 0)

        // Then the watch reads it and makes the photo anew at 24 px
        let line = try runLine(command, after: mark)
        #expect(line.contains("1 output written"), "\(line)\n\(command.transcript)")
        #expect(try VipsImage.open(file: directory.path + "/conf/out/a-small.webp").width == 24)
        #expect(!command.transcript.contains("cannot read"), "\(command.transcript)")
    }
}
