import ArgumentParser
import Foundation
import PipelineKit

extension PipelineCommand {
    struct Convert: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Convert one image (or several, or a glob's) with one command, as sharp-cli and vipsthumbnail do.",
            discussion: """
                Builds the pipeline file a one-off stands for and runs it as `pipeline run` would: the same \
                checks, exit status and summary, and the same privacy default (only the colour profile kept). \
                --print-pipeline prints that file instead, to grow the one-off into a pipeline file. \
                OUT is a file, a folder (one that exists, or a path ending in /: the name is {stem}.{format}) \
                or a path template such as out/{stem}-{width}.webp; the format is --format's, OUT's extension's, or else IN's. \
                Several INs (as a shell gives an unquoted glob), or a glob, need a folder or a template.
                """
        )

        // One array: ArgumentParser takes no positional argument after an array of them.
        @Argument(
            help: ArgumentHelp(
                "The inputs, then the output. IN: a file, a quoted glob (\"photos/*.jpg\"), a URL, or - for standard input. "
                    + "OUT: a file, a folder, a path template such as out/{stem}-{width}.webp, or - for standard output.",
                valueName: "IN… OUT"), completion: .file())
        var paths: [String]

        /// The inputs: every path but the last.
        var inputs: [String] { Array(paths.dropLast()) }
        /// The output: the last path.
        var output: String { paths.last ?? "" }

        // Numbers are taken whatever they start with, so that -5 is refused as a width, not
        // missed as a flag.
        @ArgumentParser.Option(parsing: .unconditional, help: ArgumentHelp("The width to resize to, in pixels.", valueName: "n"))
        var width: String?

        @ArgumentParser.Option(parsing: .unconditional, help: ArgumentHelp("The height to resize to, in pixels.", valueName: "n"))
        var height: String?

        @ArgumentParser.Option(
            help: ArgumentHelp(
                "How the image fits the box of --width and --height: cover (the default: cropped to it), contain, inside, outside or fill.",
                valueName: "fit"), completion: .list(["cover", "contain", "inside", "outside", "fill"]))
        var fit: String?

        // Taken whatever it starts with: a point such as -0,0.5 would otherwise read as a flag.
        @ArgumentParser.Option(
            parsing: .unconditional,
            help: ArgumentHelp(
                "The part kept when cover crops: centre, attention, entropy, faces, north, …, or a point X,Y (0 to 1 from the left and the top).",
                valueName: "position"), completion: .list(CropPosition.names.filter { $0 != "focus" }))
        var position: String?

        @ArgumentParser.Option(parsing: .unconditional, help: ArgumentHelp("The encoder's quality, 1–100.", valueName: "n"))
        var quality: String?

        @ArgumentParser.Option(
            parsing: .unconditional,
            help: ArgumentHelp(
                "Search for the lowest quality whose SSIMULACRA2 score reaches this target (not with --quality).", valueName: "score"))
        var ssimulacra2: String?

        @ArgumentParser.Option(
            help: ArgumentHelp(
                "The output format (default: OUT's extension's, or else IN's): jpeg, png, webp, avif, …", valueName: "format"),
            completion: .list(EncoderSettings.Format.allCases.map(\.rawValue)))
        var format: String?

        @ArgumentParser.Option(
            help: ArgumentHelp("Metadata kept: all, none, or a list such as icc,exif (default: icc).", valueName: "what"),
            completion: .list(["all", "none"] + EncoderSettings.Metadata.allCases.map(\.rawValue)))
        var keep: String?

        @ArgumentParser.Option(
            help: ArgumentHelp(
                "Formats read only when named, for their loaders' risk (decompress.allowUntrusted): a list such as svg,pdf.",
                valueName: "formats"))
        var allowUntrusted: String?

        @ArgumentParser.Option(
            parsing: .unconditional,
            help: ArgumentHelp(
                "The most pixels an input may have, every frame counted (decompress.maxPixels; default: \(StageDefaults.maxPixels)).",
                valueName: "n"))
        var maxPixels: String?

        @ArgumentParser.Option(
            parsing: .unconditional,
            help: ArgumentHelp(
                "The most frames an animation may have (decompress.maxFrames; default: \(DecompressSettings.defaultMaxFrames)).",
                valueName: "n"))
        var maxFrames: String?

        @Flag(help: "Print the pipeline file this command stands for (JSON) instead of running it.")
        var printPipeline = false

        @Flag(name: .shortAndLong, help: "Print only failures: no progress, no summary.")
        var quiet = false

        @Flag(name: .shortAndLong, help: "Print a line for every output written.")
        var verbose = false

        @Flag(help: "Print one JSON object per event on standard output, as `pipeline run --json` does.")
        var json = false

        func validate() throws {
            if paths.count < 2 {
                throw ValidationError("give IN and OUT: pipeline convert photo.jpg out/photo.webp --width 800")
            }
            if json && quiet { throw ValidationError("--json and --quiet cannot be used together") }
            if verbose && quiet { throw ValidationError("--quiet and --verbose cannot be used together") }
        }

        func run() async throws {
            // Before standard input is read: a signal while it is, or while the image is sent,
            // ends the command at once with nothing left behind; the run winds down its own way.
            let interruption = Interruption(ConvertStreams.ending(removing: nil))
            defer { interruption.stop() }
            let streams: ConvertStreams
            do {
                streams = try ConvertStreams(self, interruption: interruption)
            } catch {
                printError("error: \(error.description)".escapingControlCharacters)
                throw ExitCode.invalidInput
            }
            defer { streams.remove() }
            var command = self
            command.paths = streams.inputs + [streams.output]
            command.format = command.format ?? streams.inputFormat
            let text: String
            let oneOff: String
            do {
                let document = try ConvertDocument(command)
                text = try document.jsonText()
                oneOff = try document.jsonText(journal: false)
            } catch {
                let unmatched =
                    error.flag == "--format" && command.format == nil
                    ? ConvertDocument.inputProblems(of: command, baseDirectory: streams.baseDirectory) : []
                for problem in unmatched { printError("error: \(ConvertDocument.describe(problem))".escapingControlCharacters) }
                if unmatched.isEmpty { printError("error: \(error.description)".escapingControlCharacters) }
                throw ExitCode.invalidInput
            }
            var pipeline: Pipeline
            do throws(PipelineFileError) {
                pipeline = try Pipeline(json: oneOff, baseDirectory: streams.baseDirectory, processors: PipelineCommand.processors)
            } catch {
                for problem in error.problems {
                    printError("error: \(ConvertDocument.describe(problem))".escapingControlCharacters)
                }
                throw ExitCode.invalidInput
            }
            if printPipeline {
                print(text)
                return
            }
            // Its files are claimed as a pipeline file's run claims them: neither it nor such a run
            // writes one at once with the other. The run's refusals name the command, having no file.
            pipeline = Pipeline(definition: pipeline.definition, fileName: "pipeline convert")
            pipeline.claimant = "pipeline convert"
            // Planned once here too, so that no input or a clashing output is told by its argument.
            let plan: RunPlan
            do throws(PipelineFileError) {
                plan = try pipeline.plan()
            } catch {
                for problem in error.problems {
                    printError("error: \(ConvertDocument.describe(problem))".escapingControlCharacters)
                }
                throw ExitCode.invalidInput
            }
            // Convert makes every file, so a folder it cannot write in fails it: said now, by OUT.
            if let unwritable = plan.unwritableFolders.first {
                printError("error: OUT: cannot write in \(unwritable.folder): \(unwritable.reason)".escapingControlCharacters)
                throw ExitCode.invalidInput
            }
            if ssimulacra2 != nil, let animation = ConvertDocument.firstKeptAnimation(in: plan) {
                printError(
                    ("error: --ssimulacra2: \(animation.input) is an animation of \(animation.frames) frames, and a quality target "
                        + "scores still images: give --quality instead").escapingControlCharacters)
                throw ExitCode.invalidInput
            }
            var arguments = ["<convert>", "--force"]
            // Standard output carries the image: no summary beside it.
            if quiet || streams.sendsOutput { arguments.append("--quiet") }
            if verbose { arguments.append("--verbose") }
            if json { arguments.append("--json") }
            let runner = try Run.parse(arguments)
            // The file made for standard output is no file the user has: the image sent is named.
            let sendsOutput = streams.sendsOutput
            try await runner.run(
                pipeline, interruption: interruption, sharded: false, inputCount: plan.inputCount,
                describingFailures: { text in
                    let described = ConvertDocument.describe(failure: text)
                    guard sendsOutput else { return described }
                    return described.replacingOccurrences(
                        of: "the file written, [^,/]*, is", with: "the image written to standard output is", options: .regularExpression)
                })
            interruption.hand(to: ConvertStreams.ending(removing: streams.folder))
            // One that came as the run ended, after it looked: nothing is sent.
            if let signal = interruption.received { throw ExitCode.afterSignal(signal) }
            do {
                try streams.sendOutput()
            } catch let error as POSIXError where error.code == .EPIPE {
                // The reader has what it wanted (`| head -c 10`): end as a run whose reader went
                // away ends, quietly, with SIGPIPE's status.
                throw ExitCode.afterSignal(SIGPIPE)
            } catch {
                printError("error: cannot write the image to standard output: \(ErrorText.reason(error))")
                throw ExitCode.failure
            }
        }
    }
}
