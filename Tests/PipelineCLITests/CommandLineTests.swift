import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips

/// The `pipeline` command as a user runs it: exit statuses, messages, schema, plugins, Ctrl-C.
@Suite(.serialized) struct CommandLineTests {
    func writePhotos(_ count: Int, to directory: TemporaryDirectory, width: Int = 640, height: Int = 480) throws {
        let data = try Fixtures.jpeg(try Fixtures.gradient(width: width, height: height))
        for index in 0..<count { try directory.write(data, to: "in/photo-\(index).jpg") }
    }

    func writePipeline(_ directory: TemporaryDirectory, outputs: String? = nil) throws -> String {
        let json = """
            {
              "version": 1,
              "inputs": ["in/*.jpg"],
              "outputs": [
                \(outputs ?? #"{"name": "small", "steps": [{"resize": {"width": 120, "height": 120}}], "encode": {"format": "webp", "quality": 80}, "path": "out/{stem}-small.webp"}"#)
              ]
            }
            """
        return try directory.write(Data(json.utf8), to: "pipeline.json")
    }

    @Test func aMistypedCommandIsRefusedWithTheNearestOne() throws {
        let result = try CommandRunner.run(["rnu", "pipeline.json"])
        #expect(result.status == 2)
        #expect(result.standardError.contains(#"error: unknown command "rnu"; did you mean "run"?"#), "\(result.standardError)")
        #expect(result.standardError.contains("validate"), "\(result.standardError)")
        // An option or a real command is not taken for one
        #expect(try CommandRunner.run(["--version"]).status == 0)
        #expect(try CommandRunner.run(["help", "run"]).status == 0)
        #expect(try CommandRunner.run(["help", "cache", "stats"]).status == 0)
        // and one asked help for is refused so too, not answered with the top-level help
        let help = try CommandRunner.run(["help", "conver"])
        #expect(help.status == 2)
        #expect(help.standardError.contains(#"error: unknown command "conver"; did you mean "convert"?"#), "\(help.standardError)")
    }

    /// A long option with one dash, as ImageMagick writes them, was taken for short flags and
    /// refused by a letter ("Unknown option '-u'" for `-quality`): it is named, with the fix.
    @Test func aLongOptionWithOneDashIsNamedWithItsTwoDashForm() throws {
        let quality = try CommandRunner.run(["convert", "in.jpg", "-quality", "80", "out.jpg"])
        #expect(quality.status == 2)
        let named = "Error: Unknown option '-quality'. Did you mean '--quality'?\nUsage: "
        #expect(quality.standardError.hasPrefix(named), "\(quality.standardError)")
        #expect(quality.standardError.contains("See 'pipeline convert --help'"), "\(quality.standardError)")
        // A cluster holding -h showed the help and exited 0 without converting
        let width = try CommandRunner.run(["convert", "in.jpg", "-width", "100", "out.jpg"])
        #expect(width.status == 2)
        #expect(width.standardError.hasPrefix("Error: Unknown option '-width'. Did you mean '--width'?\n"), "\(width.standardError)")
        // A misspelt one is named with the option it is nearest to
        let misspelt = try CommandRunner.run(["convert", "in.jpg", "-quallity", "80", "out.jpg"])
        #expect(
            misspelt.standardError.hasPrefix("Error: Unknown option '-quallity'. Did you mean '--quality'?\n"), "\(misspelt.standardError)")
        // A subcommand's own options are the ones named
        let cache = try CommandRunner.run(["cache", "stats", "-version"])
        #expect(cache.standardError.hasPrefix("Error: Unknown option '-version'. Did you mean '--version'?\n"), "\(cache.standardError)")
        #expect(cache.standardError.contains("See 'pipeline cache stats --help'"), "\(cache.standardError)")
        // Short flags together are short flags, and -help is help
        let flags = try CommandRunner.run(["convert", "-qv", "missing.jpg", "out.jpg"])
        #expect(!flags.standardError.contains("Did you mean"), "\(flags.standardError)")
        #expect(try CommandRunner.run(["convert", "-help"]).status == 0)
        // A word that is no option of the command keeps the parser's own message
        let resize = try CommandRunner.run(["convert", "in.jpg", "-resize", "80", "out.jpg"])
        #expect(resize.standardError.hasPrefix("Error: Unknown option '-resize'\n"), "\(resize.standardError)")
        // After "--" it is an argument, not an option
        let verbose = try CommandRunner.run(["run", "--", "-verbose"])
        #expect(!verbose.standardError.contains("Did you mean"), "\(verbose.standardError)")
    }

    @Test func anArgumentThatIsNotUTF8IsRefusedByItsBytesNotTakenForAnotherName() throws {
        let directory = try TemporaryDirectory()
        try writePhotos(1, to: directory)
        // A shell passes the bytes as they are; Foundation's Process would have to make text of them.
        let script = #"""
            cd "$2" && cp in/photo-0.jpg "$(printf 'caf\351.jpg')" && exec "$1" convert "$(printf 'caf\351.jpg')" small.webp
            """#
        let result = try CommandRunner.run(
            ["-c", script, "sh", CommandRunner.executable.path, directory.path], executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(result.status == 2, "\(result.standardError)")
        #expect(
            result.standardError.contains("error: argument 2 (\"caf\u{FFFD}.jpg\") is not UTF-8"), "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/small.webp"))
    }

    @Test func versionAndHelpWork() throws {
        let version = try CommandRunner.run(["--version"])
        #expect(version.status == 0)
        #expect(version.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == PipelineKitInfo.version)
        let help = try CommandRunner.run(["--help"])
        #expect(help.status == 0)
        for command in ["run", "validate", "schema", "plugins"] { #expect(help.standardOutput.contains(command)) }
        #expect(try CommandRunner.run(["run", "--help"]).standardOutput.contains("Ctrl-C"))
        #expect(help.standardOutput.contains("USAGE: pipeline <subcommand>"), "\(help.standardOutput)")
    }

    /// A command built on `PipelineCLI.main` calls itself by the name it was run by, as a
    /// plugin's `border-pipeline` does: its usage, errors and completions are its own.
    @Test func theCommandCallsItselfByTheNameItWasRunBy() throws {
        let directory = try TemporaryDirectory()
        let renamed = directory.url.appendingPathComponent("border-pipeline")
        try FileManager.default.createSymbolicLink(at: renamed, withDestinationURL: CommandRunner.executable)
        let help = try CommandRunner.run(["--help"], executable: renamed)
        #expect(help.standardOutput.contains("USAGE: border-pipeline <subcommand>"), "\(help.standardOutput)")
        let misuse = try CommandRunner.run(["run"], executable: renamed)
        #expect(misuse.status == 2 && misuse.standardError.contains("Usage: border-pipeline run <file>"), "\(misuse.standardError)")
        let completion = try CommandRunner.run(["--generate-completion-script", "bash"], executable: renamed)
        #expect(completion.standardOutput.contains("border-pipeline"), "\(completion.standardOutput.suffix(300))")
    }

    @Test func anInvalidCommandLineExitsWithTwo() throws {
        #expect(try CommandRunner.run(["run"]).status == 2)
        #expect(try CommandRunner.run(["run", "x.json", "--frobnicate"]).status == 2)
        #expect(try CommandRunner.run(["explode"]).status == 2)
    }

    /// An unset variable (`--report "$DIR"`) gives an empty folder, which would be the current
    /// one: its own index.html would be replaced.
    @Test func anEmptyReportFolderIsRefusedNotTakenForTheCurrentOne() throws {
        let directory = try TemporaryDirectory()
        try directory.write(Data("<p>mine</p>".utf8), to: "index.html")
        let run = try CommandRunner.run(["run", "p.json", "--report", ""], in: directory.url)
        #expect(run.status == 2)
        #expect(run.standardError.contains("--report: give the report's folder; an empty value would write into the current folder"))
        let merge = try CommandRunner.run(["merge-reports", "--output", "", "a"], in: directory.url)
        #expect(merge.status == 2)
        #expect(merge.standardError.contains("--output: give the merged report's folder"), "\(merge.standardError)")
        #expect(try String(contentsOf: directory.url.appendingPathComponent("index.html"), encoding: .utf8) == "<p>mine</p>")
    }

    /// `--debounce -1` was taken for an option and refused as "Missing value"; the value is read
    /// as one, and refused for what it is.
    @Test func aNegativeDebounceIsRefusedAsADuration() throws {
        let negative = try CommandRunner.run(["watch", "--debounce", "-1", "p.json"])
        #expect(negative.status == 2)
        #expect(negative.standardError.contains(#"--debounce: expected a duration above 0"#), "\(negative.standardError)")
        #expect(negative.standardError.contains(#"not "-1""#), "\(negative.standardError)")
    }

    @Test func runMakesTheOutputsAndPrintsASummary() throws {
        let directory = try TemporaryDirectory()
        try writePhotos(3, to: directory)
        let file = try writePipeline(directory)
        let result = try CommandRunner.run(["run", file])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("3 inputs, 3 succeeded, 0 failed; 3 outputs written"))
        #expect(result.standardOutput.contains("images/s"))
        let image = try VipsImage.open(file: directory.path + "/out/photo-0-small.webp")
        #expect(image.size == .init(width: 120, height: 120))
    }

    @Test func aFailedInputIsPrintedAndExitsWithOne() throws {
        let directory = try TemporaryDirectory()
        try writePhotos(2, to: directory)
        try directory.write(Data("garbage".utf8), to: "in/broken.jpg")
        let result = try CommandRunner.run(["run", try writePipeline(directory)])
        #expect(result.status == 1)
        #expect(result.standardError.contains("failed: in/broken.jpg: decompress: not an image"))
        #expect(result.standardOutput.contains("3 inputs, 2 succeeded, 1 failed"))
    }

    @Test func anInvalidFileIsReportedWithLineAndSuggestionAndExitsWithTwo() throws {
        let directory = try TemporaryDirectory()
        try writePhotos(1, to: directory)
        let file = try writePipeline(
            directory,
            outputs:
                #"{"name": "small", "encode": {"format": "jpeg", "qualty": 80}, "path": "out/{stem}.jpg"}"#)
        for command in ["validate", "run"] {
            let result = try CommandRunner.run([command, file])
            #expect(result.status == 2)
            #expect(
                result.standardError.contains(
                    "\(file):5:52: error: outputs[0].encode.qualty: unknown key \"qualty\"; did you mean \"quality\"?"),
                "\(result.standardError)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
    }

    @Test func validateAcceptsTheBundledPipeline() throws {
        let file = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/thumbnails.json").path
        let result = try CommandRunner.run(["validate", file])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("valid: \(CommandRunner.samplePhotos.count) inputs, 3 outputs each"))
    }

    @Test func schemaIsDraft2020AndAcceptsTheBundledPipelineAndRejectsMistakes() throws {
        let directory = try TemporaryDirectory()
        let result = try CommandRunner.run(["schema"])
        #expect(result.status == 0)
        let schemaPath = try directory.write(Data(result.standardOutput.utf8), to: "schema.json")
        let schema = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        #expect(schema?["$schema"] as? String == "https://json-schema.org/draft/2020-12/schema")

        // Check with an independent validator: Python's jsonschema, as editors would.
        let good = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/thumbnails.json").path
        let bad = try writePipeline(
            directory,
            outputs:
                #"{"name": "s", "steps": [{"resize": {"width": 10, "fit": "cver"}}], "encode": {"format": "webp", "qualty": 80}, "path": "o.webp"}"#
        )
        let counts = try SchemaValidator.errorCounts(schema: schemaPath, documents: [good, bad])
        #expect(counts.first == 0, "the bundled pipeline should be valid against the schema")
        #expect((counts.last ?? 0) >= 1, "a misspelt key and an unknown fit should be invalid")
    }

    @Test func pluginsListsEveryProcessorAndItsOptions() throws {
        let result = try CommandRunner.run(["plugins"])
        #expect(result.status == 0)
        for text in ["resize:", "crop:", "blur:", "  fit (cover|contain|fill|inside|outside", "  sigma ("] {
            #expect(result.standardOutput.contains(text), "missing \(text)")
        }
    }

    @Test func aRunWithNoInputsAtAllIsAnErrorNamingEachPatternAndWhereItLooked() throws {
        // Given a pipeline whose two globs match nothing: one in an empty folder, one in a folder
        // that does not exist
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path + "/in", withIntermediateDirectories: true)
        let file = try writePipeline(directory)
        let text = try String(contentsOfFile: file, encoding: .utf8)
            .replacingOccurrences(of: #"["in/*.jpg"]"#, with: #"["in/*.jpg", "more/**/*.png"]"#)
        try directory.write(Data(text.utf8), to: "pipeline.json")

        for command in ["validate", "run"] {
            // When it is validated or run
            let result = try CommandRunner.run([command, file])

            // Then it exits 2, naming each pattern and the folder it looked in
            #expect(result.status == 2, "\(command): \(result.standardOutput)")
            #expect(
                result.standardError.contains(#"inputs[0]: "in/*.jpg" matches no files in \#(directory.path)/in"#),
                "\(result.standardError)")
            #expect(
                result.standardError.contains(
                    #"inputs[1]: "more/**/*.png" looks in the folder \#(directory.path)/more, which does not exist"#),
                "\(result.standardError)")
            #expect(result.standardError.contains("allowEmpty"))
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
    }

    @Test func allowEmptyMakesARunWithNoInputsSucceed() throws {
        // Given a pipeline that matches nothing but says so is fine
        let directory = try TemporaryDirectory()
        let file = try writePipeline(directory)
        let text = try String(contentsOfFile: file, encoding: .utf8)
            .replacingOccurrences(of: #""version": 1,"#, with: #""version": 1, "allowEmpty": true,"#)
        try directory.write(Data(text.utf8), to: "pipeline.json")

        // When it runs, then it succeeds with a warning and no inputs
        let result = try CommandRunner.run(["run", file])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("0 inputs"))
        #expect(
            result.standardError.contains(#"warning: input "in/*.jpg" looks in the folder \#(directory.path)/in, which does not exist"#))
    }

    @Test func onePatternOfSeveralMatchingNothingIsAWarning() throws {
        let directory = try TemporaryDirectory()
        try writePhotos(1, to: directory)
        let file = try writePipeline(directory)
        let text = try String(contentsOfFile: file, encoding: .utf8)
            .replacingOccurrences(of: #"["in/*.jpg"]"#, with: #"["in/*.jpg", "in/*.png"]"#)
        try directory.write(Data(text.utf8), to: "pipeline.json")
        let result = try CommandRunner.run(["run", file])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains(#"warning: input "in/*.png" matches no files in \#(directory.path)/in"#))
    }

    @Test func ctrlCStopsQueuedWorkExitsWith130AndLeavesNoTemporaryFiles() throws {
        try checkAnOrderlyStop(signal: SIGINT, status: 130, message: "interrupted")
    }

    @Test func sigtermStopsQueuedWorkLikeCtrlCExitsWith143AndLeavesNoTemporaryFiles() throws {
        try checkAnOrderlyStop(signal: SIGTERM, status: 143, message: "terminated")
    }

    /// Every other signal that would end the run is sent on as SIGTERM (each is checked to be
    /// handled in `checkAnOrderlyStop`; these three are also sent).
    @Test(arguments: [SIGHUP, SIGUSR1, SIGALRM])
    func signalsThatWouldEndTheRunAreHandledAsSigterm(signal: Int32) throws {
        try checkAnOrderlyStop(signal: signal, status: 143, message: "terminated")
    }

    /// `timeout` and a kill of a process group send SIGTERM twice, once to the process and once
    /// to its group: the second must not cut the orderly stop short.
    @Test func aSecondSigtermStillStopsInOrderWithTheSummaryAndManifest() throws {
        // Given a run long enough to interrupt, with a manifest
        let directory = try TemporaryDirectory()
        try writePhotos(60, to: directory, width: 1600, height: 1200)
        let file = try writePipeline(directory)
        let text = try String(contentsOfFile: file, encoding: .utf8)
            .replacingOccurrences(of: #""version": 1,"#, with: #""version": 1, "manifest": {"path": "out/manifest.json"},"#)
        try directory.write(Data(text.utf8), to: "pipeline.json")
        let command = try BackgroundCommand(["run", file])
        let deadline = Date(timeIntervalSinceNow: 60)
        while Date() < deadline, !directory.allFiles().contains(where: { $0.hasSuffix(".webp") }) { usleep(20_000) }
        // When SIGTERM comes once the first file is written, and again once the stop has begun
        command.signal(SIGTERM)
        #expect(command.waitForLine(timeout: 30) { $0.isError && $0.text.contains("terminated") } != nil, "\(command.transcript)")
        command.signal(SIGTERM)
        // Then the run still stops in order: 143, the summary, the manifest, no temporary file
        #expect(command.waitForExit() == 143, "\(command.transcript)")
        let summary = try #require(command.waitForLine(timeout: 5) { !$0.isError && $0.text.contains("not run") }, "\(command.transcript)")
        let images = directory.allFiles().filter { $0.hasSuffix(".webp") }
        #expect(summary.text.contains("; \(images.count) output\(images.count == 1 ? "" : "s") written"), "\(summary.text)")
        #expect(images.count < 60)
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/manifest.json"))
        #expect(!directory.allFiles().contains { $0.contains(".pipeline-tmp-") })
    }

    /// `timeout -s INT` sends Ctrl-C's signal twice, to the process and to its group: the second,
    /// at once after the first, is the same request and must not cut the orderly stop short.
    @Test func aCtrlCSentTwiceAtOnceStillStopsInOrderWithTheSummary() throws {
        // Given a run long enough to interrupt
        let directory = try TemporaryDirectory()
        try writePhotos(60, to: directory, width: 1600, height: 1200)
        let command = try BackgroundCommand(["run", try writePipeline(directory)])
        let deadline = Date(timeIntervalSinceNow: 60)
        while Date() < deadline, !directory.allFiles().contains(where: { $0.hasSuffix(".webp") }) { usleep(20_000) }
        // When SIGINT comes once the first file is written, and again as soon as the stop has begun
        command.signal(SIGINT)
        #expect(command.waitForLine(timeout: 30) { $0.isError && $0.text.contains("interrupted") } != nil, "\(command.transcript)")
        command.signal(SIGINT)
        // Then the run still stops in order: 130, the summary, no temporary file
        #expect(command.waitForExit() == 130, "\(command.transcript)")
        #expect(command.waitForLine(timeout: 5) { !$0.isError && $0.text.contains("not run") } != nil, "\(command.transcript)")
        #expect(!directory.allFiles().contains { $0.contains(".pipeline-tmp-") })
    }

    @Test func aReaderOfStandardOutputGoneAwayStopsTheRunQuietlyWith141AndNoTemporaryFiles() throws {
        // `run -v | head -1`: the pipe is closed once the first output is written
        try checkAnOrderlyStop(signal: SIGPIPE, status: 141, message: nil)
    }

    /// Sends `signal` once the first output is written (for SIGPIPE, closes standard output's
    /// pipe instead, and expects no message), and checks that the run stops as Ctrl-C should.
    func checkAnOrderlyStop(signal: Int32, status: Int32, message: String?) throws {
        // Given a run long enough to interrupt
        let directory = try TemporaryDirectory()
        try writePhotos(60, to: directory, width: 1600, height: 1200)
        let file = try writePipeline(directory)
        let process = Process()
        process.executableURL = CommandRunner.executable
        process.arguments = ["run", "--verbose", file]
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let errorText = Data.readAll(error.fileHandleForReading, inBackground: true)
        // When Ctrl-C arrives after the first output is written
        var seen = Data()
        while !String(decoding: seen, as: UTF8.self).contains("wrote ") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
        }
        // (each line as its output is written, not a buffer's worth at a time)
        let linesSeen = String(decoding: seen, as: UTF8.self).components(separatedBy: "wrote ").count - 1
        #expect((1..<10).contains(linesSeen), "\(linesSeen) lines came at once")
        #expect(try SignalDispositions.leftAtDefault(pid: process.processIdentifier) == [])
        if signal == SIGPIPE {
            try output.fileHandleForReading.close()
        } else {
            kill(process.processIdentifier, signal)
            seen.append(output.fileHandleForReading.readDataToEndOfFile())
        }
        process.waitUntilExit()
        // Then it exits 130 after finishing what was running, says how much did not run,
        // and leaves only whole outputs
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == status)
        let stderr = String(decoding: errorText(), as: UTF8.self)
        if let message {
            #expect(stderr.contains(message))
            #expect(String(decoding: seen, as: UTF8.self).contains("not run"))
        } else {
            #expect(!stderr.contains("error") && !stderr.contains("Fatal"), "\(stderr)")
        }
        let files = directory.allFiles()
        #expect(!files.contains { $0.contains(".pipeline-tmp-") })
        let outputs = files.filter { $0.hasPrefix("out/") }
        #expect(outputs.count < 60)
        for file in outputs {
            #expect(try VipsImage.open(file: directory.path + "/" + file, options: "fail_on=warning").rendered().width == 120)
        }
    }
}
