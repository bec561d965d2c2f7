import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// `pipeline convert IN… OUT`: one conversion in one command, through the same pipeline a file gives.
@Suite struct ConvertCommandTests {
    static let samples = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/samples")

    /// A folder holding two sample photographs in `in/`.
    func prepare() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        for name in ["storm.jpg", "dune.jpg"] {
            try directory.write(try Data(contentsOf: Self.samples.appendingPathComponent(name)), to: "in/\(name)")
        }
        return directory
    }

    func size(_ path: String) throws -> (Int, Int) {
        let image = try VipsImage.open(file: path)
        return (image.width, image.height)
    }

    @Test func oneFileIsResizedAndEncodedInTheFormatOfItsExtension() throws {
        let directory = try prepare()
        let result = try CommandRunner.run(
            ["convert", "in/storm.jpg", "out/storm.webp", "--width", "200", "--height", "100", "--fit", "cover"], in: directory.url)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("1 input"), "\(result.standardOutput)")
        let out = directory.url.appendingPathComponent("out/storm.webp").path
        #expect(try size(out) == (200, 100))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: out))
        #expect(bytes.count > 12 && String(decoding: bytes[8..<12], as: UTF8.self) == "WEBP")
        // A one-off conversion keeps no journal in the folder it was run from
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/.pipeline-cache"))
        // though the pipeline file it stands for, to grow into one's own, keeps one as any does
        let printed = try CommandRunner.run(["convert", "in/storm.jpg", "out/storm.webp", "--print-pipeline"], in: directory.url)
        #expect(printed.status == 0 && !printed.standardOutput.contains("incremental"), "\(printed.standardOutput)")
    }

    @Test func aFolderOutputNamesTheFileByItsStemAndFormat() throws {
        let directory = try prepare()
        let result = try CommandRunner.run(["convert", "in/storm.jpg", "thumbs/", "--width", "120", "--format", "png"], in: directory.url)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try size(directory.url.appendingPathComponent("thumbs/storm.png").path).0 == 120)

        // An existing folder without the slash is a folder too.
        let again = try CommandRunner.run(["convert", "in/dune.jpg", "thumbs", "--width", "90", "--format", "jpeg"], in: directory.url)
        #expect(again.status == 0, "\(again.standardError)")
        #expect(try size(directory.url.appendingPathComponent("thumbs/dune.jpg").path).0 == 90)
    }

    /// OUT that names no format keeps IN's, as sharp-cli does; IN that names none either asks for --format.
    @Test func aFolderOutputWithoutAFormatKeepsTheInputsFormat() throws {
        let directory = try prepare()
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 40, height: 30)), to: "in/flat.PNG")
        let file = try CommandRunner.run(["convert", "in/storm.jpg", "thumbs/", "--width", "60"], in: directory.url)
        #expect(file.status == 0, "\(file.standardError)")
        let glob = try CommandRunner.run(["convert", "in/*.PNG", "out/{stem}-{width}.{format}", "--width", "20"], in: directory.url)
        #expect(glob.status == 0, "\(glob.standardError)")
        #expect(directory.allFiles().filter { $0.hasPrefix("thumbs/") || $0.hasPrefix("out/") } == ["out/flat-20.png", "thumbs/storm.jpg"])
        #expect(try VipsImage.open(file: directory.path + "/out/flat-20.png").loader?.hasPrefix("pngload") == true)
        // A glob whose extension is not written out names no one format
        let mixed = try CommandRunner.run(["convert", "in/*", "out/", "--width", "20"], in: directory.url)
        #expect(mixed.status == 2)
        #expect(
            mixed.standardError.hasPrefix(#"error: --format: OUT "out/{stem}.{format}" does not name a format, nor does IN "in/*""#),
            "\(mixed.standardError)")
    }

    @Test func aGlobFillsATemplateForEveryInput() throws {
        let directory = try prepare()
        let result = try CommandRunner.run(["convert", "in/*.jpg", "out/{stem}-{width}.avif", "--width", "64"], in: directory.url)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("2 inputs"), "\(result.standardOutput)")
        let files = directory.allFiles().filter { $0.hasPrefix("out/") }
        #expect(files == ["out/dune-64.avif", "out/storm-64.avif"], "\(files)")
    }

    @Test func severalINsAsAShellGivesAnUnquotedGlobGoToAFolderOrATemplate() throws {
        // Given the two photos named one by one, as `in/*.jpg` unquoted reaches the command
        let directory = try prepare()
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 40, height: 30)), to: "in/flat.png")

        // When they go to a folder, their format kept
        let result = try CommandRunner.run(["convert", "in/dune.jpg", "in/storm.jpg", "thumbs/", "--width", "50"], in: directory.url)

        // Then each is made there
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("2 inputs"), "\(result.standardOutput)")
        #expect(directory.allFiles().filter { $0.hasPrefix("thumbs/") } == ["thumbs/dune.jpg", "thumbs/storm.jpg"])

        // and what cannot work is refused by its argument, with nothing made
        let refusals: [([String], String)] = [
            (
                ["in/dune.jpg", "in/storm.jpg", "out/one.webp"],
                #"OUT: 2 INs were given (as a shell gives an unquoted glob), so OUT must be a folder"#
            ),
            (["in/dune.jpg", "in/flat.png", "out/"], #"--format: OUT "out/{stem}.{format}" does not name a format, nor do the 2 INs"#),
            (["in/dune.jpg", "-", "out/"], "IN: - (standard input) is one image"),
            (["in/dune.jpg", "in/storm.jpg", "-", "--format", "png"], "OUT: 2 INs cannot all go to standard output"),
            (["in/dune.jpg"], "give IN and OUT"),
            (["in/nope.jpg", "out/n.jpg"], #"IN: there is no file "in/nope.jpg""#),
            (["in/loop.jpg", "out/n.jpg"], #"IN: "in/loop.jpg" is a loop of symbolic links"#),
            (["in/dangling.jpg", "out/n.jpg"], #"IN: "in/dangling.jpg" is a symbolic link to nothing"#),
        ]
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/in/loop.jpg", withDestinationPath: "loop.jpg")
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/in/dangling.jpg", withDestinationPath: "gone.jpg")
        for (arguments, message) in refusals {
            let refused = try CommandRunner.run(["convert"] + arguments, in: directory.url, standardInput: Data())
            #expect(refused.status == 2, "\(arguments): \(refused.standardError)")
            #expect(refused.standardError.contains(message), "\(arguments): \(refused.standardError)")
        }
        #expect(!directory.allFiles().contains { $0.hasPrefix("out/") })
    }

    @Test func aURLInputIsFetched() throws {
        let photo = try Data(contentsOf: Self.samples.appendingPathComponent("dune.jpg"))
        let server = try TestHTTPServer { _, _ in .init(status: 200, headers: ["ETag": "\"1\""], body: photo) }
        let directory = try TemporaryDirectory()
        let result = try CommandRunner.run(
            ["convert", server.url("/photos/dune.jpg"), "out/", "--width", "80", "--format", "webp"], in: directory.url)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try size(directory.url.appendingPathComponent("out/dune.webp").path).0 == 80)
        #expect(server.requests(for: "/photos/dune.jpg").count >= 1)
        // and, one-off, leaves no cache of what it fetched where it was run
        #expect(directory.allFiles() == ["out/dune.webp"], "\(directory.allFiles())")
    }

    /// When standard output's reader goes away (`| head -c 10`), before the image is made or
    /// while it is sent, the command ends quietly with SIGPIPE's status, as a run does.
    @Test(arguments: [false, true]) func standardOutputWhoseReaderHasGoneEndsAsOnSIGPIPE(whileSent: Bool) throws {
        // Given standard output a pipe, closed at once or once the first bytes have come
        let directory = try prepare()
        let process = Process()
        process.executableURL = CommandRunner.executable
        // A PNG of the whole photo: larger than a pipe holds, so the reader is gone mid-image.
        process.arguments = ["convert", "in/dune.jpg", "-", "--format", "png"]
        process.currentDirectoryURL = directory.url
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        if !whileSent { try output.fileHandleForReading.close() }

        // When the image is converted to it
        try process.run()
        if whileSent {
            #expect(try output.fileHandleForReading.read(upToCount: 8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
            try output.fileHandleForReading.close()
        }
        let said = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()

        // Then it ends with 128 + SIGPIPE, saying nothing
        #expect(process.terminationStatus == 128 + SIGPIPE)
        #expect(said.isEmpty, "\(said)")
    }

    /// A reader that goes away as the last bytes of a small image are sent: the command ends on
    /// its own at about the moment the watch of standard output ends it with 141. Only one of
    /// the two ends the process (two threads in glibc's exit handlers at once crashed it), so
    /// the status is 0 or 141, never a signal.
    @Test func aReaderGoneAsTheCommandEndsNeverCrashesIt() throws {
        let directory = try prepare()
        var statuses: [Int32] = []
        for _ in 0..<20 {
            let process = Process()
            process.executableURL = CommandRunner.raceExecutable
            process.arguments = ["convert", "in/dune.jpg", "-", "--width", "200", "--format", "jpeg"]
            process.currentDirectoryURL = directory.url
            let output = Pipe(), error = Pipe()
            process.standardOutput = output
            process.standardError = error
            try process.run()
            _ = try output.fileHandleForReading.read(upToCount: 10)
            try output.fileHandleForReading.close()
            _ = error.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationReason == .exit, "ended by signal \(process.terminationStatus)")
            statuses.append(process.terminationStatus)
        }
        #expect(statuses.allSatisfy { $0 == 0 || $0 == 128 + SIGPIPE }, "\(statuses)")
    }

    /// A signal while standard input is read, or while the image is sent to a reader that is
    /// slow to take it, ends the command at once with the signal's status, its private folder
    /// removed, as a run leaves no temporary file.
    @Test(arguments: [(SIGTERM, false), (SIGHUP, false), (SIGINT, true), (SIGTERM, true)])
    func aSignalWhileAStreamGoesEndsTheCommandWithNothingLeft(signal: Int32, whileSent: Bool) throws {
        // Given a private temporary folder, and standard input left open after part of a photo,
        // or standard output a pipe read no further than the image's first bytes
        let directory = try prepare()
        let temporary = directory.url.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = CommandRunner.executable
        process.arguments = whileSent ? ["convert", "in/dune.jpg", "-", "--format", "png"] : ["convert", "-", "out/x.webp"]
        process.currentDirectoryURL = directory.url
        process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": temporary.path]) { $1 }
        let input = Pipe(), output = Pipe(), error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        if whileSent {
            #expect(try output.fileHandleForReading.read(upToCount: 8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        } else {
            let photo = try Data(contentsOf: directory.url.appendingPathComponent("in/dune.jpg"))
            try input.fileHandleForWriting.write(contentsOf: photo.prefix(1000))
            // Its folder is made once the arguments are checked, right before the read
            let made = {
                try FileManager.default.contentsOfDirectory(atPath: temporary.path).contains { $0.hasPrefix("pipeline-convert-") }
            }
            for _ in 0..<500 where !(try made()) { usleep(20_000) }
            #expect(try made(), "no folder: the test proves nothing")
        }

        // When the signal comes
        kill(process.processIdentifier, signal)
        let said = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()

        // Then the command ends with its status (SIGHUP's as SIGTERM's), and leaves nothing
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 128 + (signal == SIGINT ? SIGINT : SIGTERM), "\(said)")
        // (the folder of runs' claims stays, as it does after any run)
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path).filter { $0.hasPrefix("pipeline-convert-") }.isEmpty)
        #expect(!directory.allFiles().contains { $0.hasPrefix("out/") })
    }

    /// A convert to a file a run of a pipeline file is writing is refused, as a run of another
    /// file is: the run would rename its own file over the one convert said it wrote.
    @Test func aConvertToAFileARunIsWritingIsRefused() throws {
        // Given a run of 30 images going, its claims in a folder of the test's
        let directory = try TemporaryDirectory()
        let image = try Fixtures.noise(width: 400, height: 300).encoded(suffix: ".png")
        for index in 0..<30 { try directory.write(image, to: "in/image-\(index).png") }
        let json = PipelineHarness.json(
            inputs: ["in/*.png"], outputs: [#"{"name": "t", "encode": {"format": "webp", "effort": 6}, "path": "out/{stem}.webp"}"#])
        try directory.write(Data(json.utf8), to: "p.json")
        let claims = try TemporaryDirectory()
        let environment = ["XDG_RUNTIME_DIR": claims.path]
        let run = try BackgroundCommand(["run", "--quiet", "p.json"], in: directory.url, environment: environment)
        defer { run.kill() }
        let folder = claims.path + "/pipeline-runs-\(getuid())"
        let claimed = { ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).contains { $0.hasSuffix(".claim") } }
        for _ in 0..<500 where !claimed() { usleep(20_000) }
        #expect(claimed(), "the run made no claim: the test proves nothing\n\(run.transcript)")

        // When one of its files is converted to meanwhile
        let converted = try CommandRunner.run(
            ["convert", "in/image-7.png", "out/image-7.webp"], in: directory.url, environment: environment)

        // Then convert is refused, naming itself, the file and the run's pipeline file
        #expect(converted.status == 2)
        #expect(
            converted.standardError.hasPrefix("pipeline convert: error: outputs: this run would write ")
                && converted.standardError.contains("out/image-7.webp, which a run of ")
                && converted.standardError.contains("p.json"), "\(converted.standardError)")
        #expect(run.waitForExit(timeout: 300) == 0, "\(run.transcript)")
    }

    /// A convert killed outright (SIGKILL) leaves its private folder, with standard input in
    /// it: the next convert on the machine removes it, and keeps those of converts still going.
    @Test func aKilledConvertsFolderIsRemovedByTheNext() throws {
        let directory = try prepare()
        let temporary = directory.url.appendingPathComponent("tmp")
        // A process that has ended, and this one, still going
        let ended = Process()
        ended.executableURL = URL(fileURLWithPath: "/bin/true")
        try ended.run()
        ended.waitUntilExit()
        let left = "pipeline-convert-\(ended.processIdentifier)-\(ImageWriter.machineTag)-1.AbC123"
        let going = "pipeline-convert-\(TemporaryFileSweeper.ownerTag).XyZ789"
        let older = "pipeline-convert.QwE456"
        for name in [left, going, older] { try directory.write(Data("staged".utf8), to: "tmp/\(name)/stdin") }
        // (a convert of a file, which stages nothing of its own)
        let result = try CommandRunner.run(
            ["convert", "in/storm.jpg", "out/x.webp", "--width", "40"], in: directory.url, environment: ["TMPDIR": temporary.path])
        #expect(result.status == 0, "\(result.standardError)")
        // (an older convert's folder names no process: it stays)
        let kept = try FileManager.default.contentsOfDirectory(atPath: temporary.path).filter { $0.hasPrefix("pipeline-convert") }
        #expect(Set(kept) == [going, older])
    }

    @Test func standardInputAndOutputAreReadAndWrittenAsDash() throws {
        let directory = try prepare()
        let photo = try Data(contentsOf: directory.url.appendingPathComponent("in/storm.jpg"))

        // From standard input to standard output: the image alone goes out, nothing is left behind
        let piped = try CommandRunner.run(
            ["convert", "-", "-", "--width", "120", "--format", "webp"], in: directory.url, standardInput: photo)
        #expect(piped.status == 0, "\(piped.standardError)")
        let image = try VipsImage.open(data: piped.standardOutputData)
        #expect(image.width == 120)
        #expect(String(decoding: piped.standardOutputData.prefix(4), as: UTF8.self) == "RIFF")
        #expect(Set(directory.allFiles()) == ["in/dune.jpg", "in/storm.jpg"])

        // From standard input to a file, and from a file to standard output in its own format
        let toFile = try CommandRunner.run(["convert", "-", "out/small.png", "--width", "40"], in: directory.url, standardInput: photo)
        #expect(toFile.status == 0, "\(toFile.standardError)")
        #expect(try size(directory.url.appendingPathComponent("out/small.png").path).0 == 40)
        // and into the current folder, which the summary names by the file, as for a file's input
        let here = try CommandRunner.run(["convert", "-", "small.webp", "--width", "40"], in: directory.url, standardInput: photo)
        #expect(here.standardOutput.hasSuffix("; outputs: small.webp\n"), "\(here.standardOutput)")
        // and into a folder not made yet, named as standard input's stem (it was a file named so)
        let toFolder = try CommandRunner.run(
            ["convert", "-", "new/deeper/", "--width", "40", "--format", "webp"], in: directory.url, standardInput: photo)
        #expect(toFolder.status == 0, "\(toFolder.standardError)")
        #expect(try size(directory.url.appendingPathComponent("new/deeper/stdin.webp").path).0 == 40)
        // Without --format or OUT's extension, standard input keeps the format its bytes are in
        let kept = try CommandRunner.run(["convert", "-", "-", "--width", "50"], in: directory.url, standardInput: photo)
        #expect(kept.status == 0, "\(kept.standardError)")
        #expect(kept.standardOutputData.starts(with: [0xFF, 0xD8]))
        #expect(try VipsImage.open(data: kept.standardOutputData).width == 50)
        let png = try VipsImage.open(data: photo).encoded(suffix: ".png")
        let keptInFolder = try CommandRunner.run(["convert", "-", "kept/", "--width", "20"], in: directory.url, standardInput: png)
        #expect(keptInFolder.status == 0, "\(keptInFolder.standardError)")
        #expect(try size(directory.url.appendingPathComponent("kept/stdin.png").path).0 == 20)
        // an animated AVIF too, which libavif reads where libvips does not
        let slideshow = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/samples/animated/slideshow.gif").path
        #expect(try CommandRunner.run(["convert", slideshow, "anim.avif", "--width", "40"], in: directory.url).status == 0)
        let animation = try Data(contentsOf: directory.url.appendingPathComponent("anim.avif"))
        let keptAnimation = try CommandRunner.run(["convert", "-", "-", "--width", "20"], in: directory.url, standardInput: animation)
        #expect(keptAnimation.status == 0, "\(keptAnimation.standardError)")
        #expect(String(decoding: keptAnimation.standardOutputData.prefix(12).suffix(4), as: UTF8.self) == "avis")
        let fromFile = try CommandRunner.run(["convert", "in/dune.jpg", "-", "--width", "30"], in: directory.url)
        #expect(fromFile.status == 0, "\(fromFile.standardError)")
        #expect(try VipsImage.open(data: fromFile.standardOutputData).width == 30)

        // What is not an image is named as standard input, and sends nothing
        let broken = try CommandRunner.run(
            ["convert", "-", "-", "--format", "png"], in: directory.url, standardInput: Data("not an image".utf8))
        #expect(broken.status == 1)
        #expect(broken.standardError.contains("failed: stdin: decompress:"), "\(broken.standardError)")
        #expect(broken.standardOutputData.isEmpty)

        // and what cannot work is refused by the argument
        let refusals: [([String], Data?, String)] = [
            (["convert", "-", "-"], Data("not an image".utf8), "--format: standard input (IN -) is in no format pipeline writes"),
            (["convert", "-", "out/"], Data("<svg/>".utf8), "--format: standard input (IN -) is in no format pipeline writes"),
            (["convert", "-", "x.webp"], Data(), "IN: standard input is empty"),
            (["convert", "in/*.jpg", "-", "--format", "png"], nil, "OUT: IN \"in/*.jpg\" is a glob"),
            (["convert", "-", "-", "--format", "png", "--verbose"], photo, "--verbose: standard output carries the image"),
            (["convert", "-", "x.png", "--print-pipeline"], photo, "--print-pipeline: a pipeline file cannot read standard input"),
        ]
        for (arguments, input, message) in refusals {
            let refused = try CommandRunner.run(arguments, in: directory.url, standardInput: input)
            #expect(refused.status == 2, "\(arguments): \(refused.standardError)")
            #expect(refused.standardError.contains("error: " + message), "\(arguments): \(refused.standardError)")
        }
    }

    /// `--max-frames` sets the decoder's limit on an animation's frames, which a refusal names
    /// by the flag.
    @Test func maxFramesSetsTheLimitARefusalNamesByTheFlag() throws {
        let directory = try prepare()
        let slideshow = Self.samples.appendingPathComponent("animated/slideshow.gif").path
        let refused = try CommandRunner.run(["convert", slideshow, "out/s.webp", "--max-frames", "2"], in: directory.url)
        #expect(refused.status == 1 && refused.standardError.contains("more than --max-frames (2)"), "\(refused.standardError)")
        let printed = try CommandRunner.run(
            ["convert", slideshow, "out/s.webp", "--max-frames", "2", "--print-pipeline"], in: directory.url)
        #expect(printed.standardOutput.contains(#""maxFrames" : 2"#), "\(printed.standardOutput)")
        let wrong = try CommandRunner.run(["convert", slideshow, "out/s.webp", "--max-frames", "0"], in: directory.url)
        #expect(wrong.status == 2 && wrong.standardError.contains("error: --max-frames: "), "\(wrong.standardError)")
    }

    @Test func aPipeOrADeviceAsINIsRefusedWithStandardInputToGiveInstead() throws {
        let directory = try prepare()
        // What a shell's `<(curl …)` names: a FIFO, refused before anything runs
        let fifo = directory.url.appendingPathComponent("in/fetched.jpg").path
        #expect(mkfifo(fifo, 0o600) == 0)
        for input in [fifo, "/dev/zero"] {
            let result = try CommandRunner.run(["convert", input, "out/x.webp"], in: directory.url)
            #expect(result.status == 2, "\(input): \(result.standardError)")
            #expect(
                result.standardError.contains(
                    "error: IN: \"\(input)\" is a pipe or a device, not a file: send its bytes to standard input"),
                "\(result.standardError)")
        }
        #expect(!directory.allFiles().contains { $0.hasPrefix("out/") })
    }
}
