import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// `pipeline watch`: one run at start, then one incremental re-run per settled batch of changes
/// to the inputs, the pipeline file or a step's image; an invalid pipeline file is reported and
/// the last valid one kept; Ctrl-C and SIGTERM end it cleanly.
@Suite(.serialized) struct WatchCommandTests {
    static let small =
        #"{"name": "small", "steps": [{"resize": {"width": 16}}], "encode": {"format": "webp"}, "path": "out/{stem}-small.webp"}"#
    static let large =
        #"{"name": "large", "steps": [{"resize": {"width": 40}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-large.jpg"}"#

    /// A folder with `count` small photos in `in/`, one more in `spare/` to copy in, and a
    /// pipeline file `p.json` making `outputs` of `in/*.jpg`.
    func setUp(inputs count: Int, outputs: [String] = [small], inputPattern: String = "in/*.jpg") throws -> TemporaryDirectory {
        try Fixtures.watchedFolder(inputs: count, outputs: outputs, inputPattern: inputPattern)
    }

    static func photo(width: Int = 48, height: Int = 32) throws -> Data {
        try Fixtures.jpeg(try Fixtures.gradient(width: width, height: height))
    }

    /// The image at `path`, read from its bytes now (not through libvips' cache of opened files).
    static func image(_ path: String) throws -> VipsImage {
        try VipsImage.open(data: try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Starts `pipeline watch p.json` in `directory`.
    func watch(_ directory: TemporaryDirectory, _ options: [String] = []) throws -> BackgroundCommand {
        try BackgroundCommand(["watch", "--debounce", "500ms"] + options + ["p.json"], in: directory.url)
    }

    /// Waits for the next summary line on standard output after line `mark` that starts with `prefix`.
    func summary(_ command: BackgroundCommand, after mark: Int = 0, startingWith prefix: String) throws -> String {
        // Generous: with the whole suite running beside it on two cores, a watch's first run
        // has been seen to take over a minute to print (it takes under a second alone).
        let line = command.waitForLine(after: mark, timeout: 180) {
            !$0.isError && ($0.text.hasPrefix("run: ") || $0.text.hasPrefix("re-run "))
        }
        let text = try #require(line?.text, "no run line came:\n\(command.transcript)")
        #expect(text.hasPrefix(prefix), "\(text)\n\(command.transcript)")
        return text
    }

    /// Replaces `relative` as editors do: a new file renamed over the old one.
    func replace(_ relative: String, in directory: TemporaryDirectory, with data: Data) throws {
        let temporary = try directory.write(data, to: relative + ".swp")
        try #require(rename(temporary, directory.path + "/" + relative) == 0)
    }

    @Test func runsOnceAtStartAndAgainWhenAnInputIsAdded() throws {
        // Given a watch over two photos
        let directory = try setUp(inputs: 2)
        let command = try watch(directory)
        defer { command.kill() }
        let first = try summary(command, startingWith: "run: ")
        #expect(first.contains("2 inputs, 2 succeeded, 0 failed; 2 outputs written"))

        // When a third photo is written into the folder
        let mark = command.lineCount
        try directory.write(try Self.photo(), to: "in/new.jpg")

        // Then one re-run makes its output and leaves the others as they were
        let again = try summary(command, after: mark, startingWith: "re-run (1 change): ")
        #expect(again.contains("3 inputs, 3 succeeded, 0 failed; 1 output written, 2 up to date"))
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/new-small.webp"))
    }

    @Test func aBurstOfAHundredCopiedFilesIsOneReRun() throws {
        // Given a watch over one photo
        let directory = try setUp(inputs: 1)
        let command = try BackgroundCommand(["watch", "--debounce", "1s", "p.json"], in: directory.url)
        defer { command.kill() }
        _ = try summary(command, startingWith: "run: ")

        // When 100 photos are copied in, one after another as fast as they go
        let mark = command.lineCount
        for index in 0..<100 {
            try FileManager.default.copyItem(atPath: directory.path + "/spare/photo.jpg", toPath: directory.path + "/in/copy-\(index).jpg")
        }

        // Then a single re-run takes all of them, and its own 100 outputs set off nothing: the
        // next re-run is the one a later single file causes
        let burst = try summary(command, after: mark, startingWith: "re-run (100 changes): ")
        #expect(burst.contains("101 inputs, 101 succeeded, 0 failed; 100 outputs written, 1 up to date"))
        let next = command.lineCount
        try directory.write(try Self.photo(), to: "in/one-more.jpg")
        let later = try summary(command, after: next, startingWith: "re-run (1 change): ")
        #expect(later.contains("102 inputs, 102 succeeded, 0 failed; 1 output written, 101 up to date"))
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.count == 102)
    }

    @Test func anInvalidPipelineFileIsReportedAndTheLastValidOneKept() throws {
        // Given a watch of a pipeline with one output
        let directory = try setUp(inputs: 2)
        let command = try watch(directory)
        defer { command.kill() }
        _ = try summary(command, startingWith: "run: ")

        // When the pipeline file is saved with a syntax error
        var mark = command.lineCount
        try directory.write(Data(#"{"version": 1, "inputs": ["#.utf8), to: "p.json")

        // Then its problem is printed as `validate` prints it, and the watch goes on
        let problem = command.waitForLine(after: mark) {
            $0.isError && $0.text.hasPrefix("p.json:") && $0.text.contains("error: invalid JSON")
        }
        #expect(problem != nil, "\(command.transcript)")
        #expect(command.waitForLine(after: mark) { $0.isError && $0.text.contains("keeping the last valid pipeline") } != nil)

        // with the last valid pipeline: a new input gets its one output
        mark = command.lineCount
        try directory.write(try Self.photo(), to: "in/p2.jpg")
        let kept = try summary(command, after: mark, startingWith: "re-run (1 change): ")
        #expect(kept.contains("3 inputs, 3 succeeded, 0 failed; 1 output written, 2 up to date"))

        // When it is saved so that it loads but finds no inputs (a glob in a folder that is not there)
        mark = command.lineCount
        try directory.write(Data(PipelineHarness.json(inputs: ["elsewhere/*.jpg"], outputs: [Self.small]).utf8), to: "p.json")

        // Then that is as invalid: said, and the last valid pipeline kept, its folder still watched
        #expect(command.waitForLine(after: mark) { $0.isError && $0.text.contains("elsewhere") } != nil, "\(command.transcript)")
        #expect(command.waitForLine(after: mark) { $0.isError && $0.text.contains("keeping the last valid pipeline") } != nil)
        mark = command.lineCount
        try directory.write(try Self.photo(), to: "in/p3.jpg")
        let stillKept = try summary(command, after: mark, startingWith: "re-run (1 change): ")
        #expect(stillKept.contains("4 inputs, 4 succeeded, 0 failed; 1 output written, 3 up to date"), "\(stillKept)")

        // When a valid pipeline with a second output replaces it (renamed over it, as editors save)
        mark = command.lineCount
        try replace(
            "p.json", in: directory, with: Data(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.small, Self.large]).utf8))

        // Then the new pipeline runs: every input gets the new output (the small ones are made
        // again too: a larger output changes the decode size, which their fingerprints hold)
        let changed = try summary(command, after: mark, startingWith: "re-run (1 change): ")
        #expect(changed.contains("4 inputs, 4 succeeded, 0 failed; 8 outputs written"))
        for index in 0..<4 { #expect(FileManager.default.fileExists(atPath: directory.path + "/out/p\(index)-large.jpg")) }
    }

    @Test func aPipelineFileThatIsASymbolicLinkIsWatchedThroughIt() throws {
        // Given a watch of p.json, a symbolic link to the file that holds the pipeline
        let directory = try setUp(inputs: 1)
        try #require(rename(directory.path + "/p.json", directory.path + "/real.json") == 0)
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/p.json", withDestinationPath: "real.json")
        let command = try watch(directory)
        defer { command.kill() }
        _ = try summary(command, startingWith: "run: ")

        // When the file it names is edited in place, with a second output
        let mark = command.lineCount
        try Data(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.small, Self.large]).utf8)
            .write(to: directory.url.appendingPathComponent("real.json"))

        // Then the watch loads it again and runs it
        let changed = try summary(command, after: mark, startingWith: "re-run (1 change): ")
        #expect(changed.contains("1 input, 1 succeeded, 0 failed; 2 outputs written"), "\(changed)")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/p0-large.jpg"))
    }

    @Test func aChangedOverlayImageRemakesTheOutputs() throws {
        // Given a watch of a pipeline that puts logo.png over each photo
        let composite =
            #"{"name": "marked", "steps": [{"resize": {"width": 40}}, {"composite": {"image": "logo.png", "gravity": "northwest"}}], "encode": {"format": "png"}, "path": "out/{stem}-marked.png"}"#
        let directory = try setUp(inputs: 2, outputs: [composite])
        try directory.write(try Fixtures.png(try Fixtures.solid(width: 8, height: 8, colour: [255, 0, 0])), to: "logo.png")
        let command = try watch(directory)
        defer { command.kill() }
        _ = try summary(command, startingWith: "run: ")
        let output = directory.path + "/out/p0-marked.png"
        #expect(try Self.image(output).pixel(x: 2, y: 2) == [255, 0, 0])

        // When the logo is replaced by a blue one
        let mark = command.lineCount
        try replace("logo.png", in: directory, with: try Fixtures.png(try Fixtures.solid(width: 8, height: 8, colour: [0, 0, 255])))

        // Then both outputs are made again, with the new logo
        let again = try summary(command, after: mark, startingWith: "re-run (1 change): ")
        #expect(again.contains("2 inputs, 2 succeeded, 0 failed; 2 outputs written"))
        #expect(try Self.image(output).pixel(x: 2, y: 2) == [0, 0, 255])

        // When the logo is removed: the pipeline is refused as it would be at the start, naming
        // it, and the last valid one kept
        var removed = command.lineCount
        try FileManager.default.removeItem(atPath: directory.path + "/logo.png")
        #expect(
            command.waitForLine(after: removed) { $0.isError && $0.text.contains("composite.image") && $0.text.contains("logo.png") }
                != nil, "\(command.transcript)")
        #expect(command.waitForLine(after: removed) { $0.isError && $0.text.contains("keeping the last valid pipeline") } != nil)
        // and once a green one is there, the outputs are made with it
        removed = command.lineCount
        try replace("logo.png", in: directory, with: try Fixtures.png(try Fixtures.solid(width: 8, height: 8, colour: [0, 255, 0])))
        let restored = try summary(command, after: removed, startingWith: "re-run (1 change): ")
        #expect(restored.contains("2 inputs, 2 succeeded, 0 failed; 2 outputs written"), "\(restored)")
        #expect(try Self.image(output).pixel(x: 2, y: 2) == [0, 255, 0])
    }

    @Test func aNewPhotoThatMakesThePlanFailIsSaidToStopEveryRunUntilMended() throws {
        // Given a watch of `in/**/*.jpg` naming outputs by stem
        let directory = try setUp(inputs: 1, inputPattern: "in/**/*.jpg")
        let command = try watch(directory)
        defer { command.kill() }
        _ = try summary(command, startingWith: "run: ")

        // When a photo of the same stem appears in a subfolder, and the outputs would clash
        var mark = command.lineCount
        try directory.write(try Self.photo(), to: "in/sub/p0.jpg")

        // Then the clash is said, and that nothing runs until it is mended
        #expect(command.waitForLine(after: mark) { $0.isError && $0.text.contains("would both write") } != nil, "\(command.transcript)")
        let stopped = command.waitForLine(after: mark) {
            $0.isError && $0.text.hasPrefix("no re-run (") && $0.text.contains("): nothing is made until")
        }
        #expect(stopped != nil, "\(command.transcript)")
        // and once it is gone, the watch runs again
        mark = command.lineCount
        try FileManager.default.removeItem(atPath: directory.path + "/in/sub/p0.jpg")
        _ = try summary(command, after: mark, startingWith: "re-run (")
    }

    @Test func aPhotoInANewSubfolderOfADoubleStarGlobIsSeen() throws {
        // Given a watch of `in/**/*.jpg`
        let directory = try setUp(
            inputs: 1,
            outputs: [
                #"{"name": "small", "steps": [{"resize": {"width": 16}}], "encode": {"format": "webp"}, "path": "out/{dir}/{stem}-small.webp"}"#
            ],
            inputPattern: "in/**/*.jpg")
        let command = try watch(directory)
        defer { command.kill() }
        _ = try summary(command, startingWith: "run: ")

        // When a photo is written two new folders down
        let mark = command.lineCount
        try directory.write(try Self.photo(), to: "in/a/b/deep.jpg")

        // Then a re-run makes its output
        let again = try summary(command, after: mark, startingWith: "re-run (")
        #expect(again.contains("2 inputs, 2 succeeded, 0 failed; 1 output written, 1 up to date"), "\(again)")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/a/b/deep-small.webp"))
    }

    @Test func aGlobAddedToAListFileIsWatchedToo() throws {
        // Given a watch of a pipeline whose inputs come from a list naming one photo
        let directory = try setUp(inputs: 1)
        try directory.write(Data("in/p0.jpg\n".utf8), to: "urls.txt")
        try directory.write(
            Data(
                PipelineHarness.json(inputs: [], outputs: [Self.small]).replacingOccurrences(
                    of: #""inputs": []"#, with: #""inputs": [{"list": "urls.txt"}]"#
                ).utf8), to: "p.json")
        let command = try watch(directory)
        defer { command.kill() }
        _ = try summary(command, startingWith: "run: ")

        // When the list gains a glob of a folder that does not exist yet
        var mark = command.lineCount
        let list = try FileHandle(forWritingTo: directory.url.appendingPathComponent("urls.txt"))
        try list.seekToEnd()
        try list.write(contentsOf: Data("extra/*.jpg\n".utf8))
        try list.close()
        _ = try summary(command, after: mark, startingWith: "re-run (1 change): 1 input, ")

        // and then that folder appears with a photo in it
        mark = command.lineCount
        try directory.write(try Self.photo(), to: "extra/new.jpg")

        // Then a re-run makes its output
        let again = try summary(command, after: mark, startingWith: "re-run (")
        #expect(again.contains("2 inputs, 2 succeeded, 0 failed; 1 output written, 1 up to date"), "\(again)")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/new-small.webp"))
    }

    @Test func ctrlCDuringARunLetsItFinishAndExits130WithoutTemporaryFiles() throws {
        // Given a watch that has run once
        let directory = try setUp(inputs: 1, outputs: [Self.small, Self.large])
        let command = try watch(directory, ["--log-level", "info"])
        defer { command.kill() }
        _ = try summary(command, startingWith: "run: ")

        // When 20 larger photos arrive and Ctrl-C comes as their re-run starts
        let mark = command.lineCount
        let photo = try Self.photo(width: 1200, height: 900)
        for index in 0..<20 { try directory.write(photo, to: "spare/big-\(index).jpg") }
        for index in 0..<20 {
            try FileManager.default.moveItem(
                atPath: directory.path + "/spare/big-\(index).jpg", toPath: directory.path + "/in/big-\(index).jpg")
        }
        let started = command.waitForLine(after: mark) { $0.isError && $0.text.contains("run started") }
        #expect(started != nil, "\(command.transcript)")
        command.signal(SIGINT)

        // Then it says so, exits 130, and leaves no temporary file; what was written is whole
        let status = command.waitForExit()
        #expect(status == 130, "\(command.transcript)")
        #expect(command.waitForLine(after: mark) { $0.isError && $0.text.hasPrefix("interrupted") } != nil)
        let files = directory.allFiles()
        #expect(!files.contains { $0.contains(".pipeline-tmp-") }, "\(files)")
        for file in files where file.hasPrefix("out/") {
            #expect((try? Self.image(directory.path + "/" + file)) != nil, "\(file) is not a whole image")
        }
    }

    @Test func ctrlCDuringTheFirstRunExits130WithoutAnnouncingAWatch() throws {
        // Given a first run of 20 larger photos
        let directory = try setUp(inputs: 0, outputs: [Self.small, Self.large])
        let photo = try Self.photo(width: 1200, height: 900)
        for index in 0..<20 { try directory.write(photo, to: "in/big-\(index).jpg") }
        let command = try watch(directory, ["--log-level", "info"])
        defer { command.kill() }
        // When Ctrl-C comes as it starts
        #expect(command.waitForLine(timeout: 180) { $0.isError && $0.text.contains("run started") } != nil, "\(command.transcript)")
        command.signal(SIGINT)
        // Then it stops as a run does, and never says it is watching
        #expect(command.waitForExit() == 130, "\(command.transcript)")
        #expect(!command.transcript.contains("watching "), "\(command.transcript)")
    }

    @Test func sigtermWhileWaitingExits143() throws {
        let directory = try setUp(inputs: 1)
        let command = try watch(directory)
        defer { command.kill() }
        _ = try summary(command, startingWith: "run: ")
        #expect(command.waitForLine { $0.isError && $0.text.hasPrefix("watching ") } != nil)

        command.signal(SIGTERM)

        #expect(command.waitForExit() == 143, "\(command.transcript)")
    }
}
