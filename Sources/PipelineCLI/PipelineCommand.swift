import ArgumentParser
import Foundation
public import PipelineKit
import Vips

/// The whole `pipeline` command line as a library, so that a plugin author's package can ship
/// its own command with its own processors:
///
/// ```swift
/// await PipelineCLI.main(processors: .standard.adding(Threshold.self))
/// ```
public enum PipelineCLI {
    /// Parses the process's arguments and runs the command they name (`run`, `convert`, `validate`,
    /// `explain`, `watch`, `serve`, `schema`, `plugins`, `cache`, `html`, `merge-reports`) with
    /// `processors`, then exits with the documented status: 0 every input succeeded, 1 some
    /// failed, 2 the pipeline file or the command line is invalid, 130 interrupted (Ctrl-C), 141
    /// standard output's reader went away, 143 stopped by SIGTERM. Never returns.
    ///
    /// - Parameters:
    ///   - processors: the steps a pipeline file may name: `.standard`, with a plugin's added.
    ///   - commandName: what usage, help and shell completions call the command; by default the
    ///     name it was run by (`border-pipeline`), so that a plugin's command does not call
    ///     itself `pipeline`.
    ///   - version: what `--version` prints; by default pipeline's.
    @MainActor
    public static func main(processors: ProcessorRegistry, commandName: String? = nil, version: String? = nil) async -> Never {
        // On the main actor, as the top-level code that calls it: these lines then run before
        // any of libdispatch's worker threads starts, and the first of them needs descriptors.
        // As servers do: many systems start processes with a soft limit of open files far below
        // the hard one, and a run holds a few per image in flight.
        if let limit = OpenFileLimit.raiseToHardLimit(), limit < OpenFileLimit.leastToStart {
            printError(
                "error: this process may have only \(limit) files open at once (ulimit -n), and pipeline needs at least "
                    + "\(OpenFileLimit.leastToStart) to start: raise it with ulimit -n")
            ProcessEnd.exit(ExitCode.failure.rawValue)
        }
        // Swift's arguments replace such bytes, so the command would name a file that is not there.
        for index in 1..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[index] else { continue }
            let bytes = UnsafeBufferPointer(start: raw, count: strlen(raw)).map { UInt8(bitPattern: $0) }
            guard String(validating: bytes, as: UTF8.self) == nil else { continue }
            let shown = String(decoding: bytes, as: UTF8.self).escapingControlCharacters
            printError(
                "error: argument \(index) (\"\(shown)\") is not UTF-8 where \u{FFFD} stands: pipeline names "
                    + "files by their names as text; rename the file")
            ProcessEnd.exit(ExitCode.invalidInput.rawValue)
        }
        let ranAs = CommandLine.arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent } ?? ""
        await main(
            processors: processors, arguments: Array(CommandLine.arguments.dropFirst()),
            commandName: commandName ?? (ranAs.isEmpty ? "pipeline" : ranAs), version: version)
    }

    /// `main(processors:commandName:version:)` with explicit arguments.
    ///
    /// - Parameters:
    ///   - processors: the steps a pipeline file may name.
    ///   - arguments: the command line without the program's name.
    ///   - commandName: what usage, help and shell completions call the command.
    ///   - version: what `--version` prints; by default pipeline's.
    public static func main(
        processors: ProcessorRegistry, arguments: [String], commandName: String = "pipeline", version: String? = nil
    ) async -> Never {
        // Before the run's threads exist, so that none of them gets a malloc arena of its own,
        // and the memory budget is measured from what the process holds before they do.
        Vips.tuneAllocator()
        MemoryBudget.recordBaseline()
        Vips.fitThreadStacksToAddressSpaceLimit()
        // Again, for a program that calls this one with its own arguments.
        OpenFileLimit.raiseToHardLimit()
        if let vectorCodeOff = Vips.vectorCodeOff { printError("warning: \(vectorCodeOff)") }
        if !processors.problems.isEmpty {
            for problem in processors.problems { printError("error: \(problem)") }
            ProcessEnd.exit(ExitCode.invalidInput.rawValue)
        }
        let identity = PipelineCommand.Identity(name: commandName, version: version ?? PipelineKitInfo.version)
        await PipelineCommand.$identity.withValue(identity) {
            await PipelineCommand.$processors.withValue(processors) {
                await PipelineCommand.main(arguments)
            }
        }
        ProcessEnd.exit(0)
    }
}

/// `pipeline`: turns declarative JSON pipeline files into finished images.
///
/// The commands only parse arguments and print; all the work goes through PipelineKit's public API.
struct PipelineCommand: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: identity.name,
            abstract: "Turn declarative JSON pipeline files into thumbnails, responsive image sets and placeholders.",
            discussion: """
                Exit status: 0 when every input succeeded, 1 when some failed, 2 when the pipeline \
                file or the command line is invalid (nothing ran), 130 when interrupted with Ctrl-C, 143 when \
                stopped with SIGTERM (or SIGHUP, SIGUSR1 and the other signals handled as SIGTERM), 141 when standard output's reader went away.
                """,
            version: identity.version,
            subcommands: commands
        )
    }

    /// What the command is called and the version it prints.
    struct Identity: Sendable {
        let name: String
        let version: String
    }

    /// The command's identity, set by `PipelineCLI.main` (a plugin's command has its own name).
    @TaskLocal static var identity = Identity(name: "pipeline", version: PipelineKitInfo.version)

    /// The subcommands, in the order `--help` lists them; `serve` when built with the Server trait.
    private static var commands: [any ParsableCommand.Type] {
        var commands: [any ParsableCommand.Type] = [
            Run.self, Convert.self, Validate.self, Explain.self, Watch.self, Schema.self, Plugins.self, Cache.self, HTML.self,
            MergeReports.self, MergeManifests.self,
        ]
        #if Server
        commands.insert(Serve.self, at: 5)
        #endif
        return commands
    }

    /// The processors every command knows, set by `PipelineCLI.main(processors:)` for the
    /// commands it runs (a task-local, so no global state outlives the call).
    @TaskLocal static var processors = ProcessorRegistry([])

    /// Parses and runs a command, mapping argument errors to exit status 2 as documented
    /// (ArgumentParser's own default is 64).
    static func main(_ arguments: [String]) async {
        if let unknown = unknownCommand(in: arguments) {
            printError("error: \(unknown)")
            ProcessEnd.exit(ExitCode.invalidInput.rawValue)
        }
        if let refusal = longOptionWithOneDash(in: arguments) ?? fileNamedLikeAnOption(in: arguments) ?? optionGivenTwice(in: arguments) {
            printError(refusal)
            ProcessEnd.exit(ExitCode.invalidInput.rawValue)
        }
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                printError(fullMessage(for: error))
                ProcessEnd.exit(ExitCode.invalidInput.rawValue)
            }
            ProcessEnd.exit(withError: error, of: self)
        }
    }
}

extension PipelineCommand {
    /// What is wrong when the first argument names no command (`pipeline rnu`, or `pipeline
    /// help rnu`, whose help would be the top-level one, with status 0), with the command it is
    /// nearest to; nil when it names one, or is an option.
    static func unknownCommand(in arguments: [String]) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-") else { return nil }
        if first == "help" { return unknownCommand(in: Array(arguments.dropFirst())) }
        let names = commands.map { $0._commandName } + ["help"]
        guard !names.contains(first) else { return nil }
        let hint = NearestName.suggestion(for: first, among: names).map { "; did you mean \"\($0)\"?" } ?? ""
        return "unknown command \(first.quotedValue)\(hint) (the commands are \(names.dropLast().joined(separator: ", ")))"
    }
}

extension PipelineCommand {
    /// The refusal of a long option written with one dash, as ImageMagick's are (`-quality 80`),
    /// with the two-dash option it means; nil when no argument is one. Checked before parsing:
    /// the parser takes such a word for a cluster of short flags, and either refuses it by one
    /// letter (`-u` of `-quality`) or, when the cluster holds `-h`, shows the help and exits 0
    /// without running (`-width 100`). A word made only of the command's short flags (`-qv`)
    /// is left to the parser.
    static func longOptionWithOneDash(in arguments: [String]) -> String? {
        guard let (command, path) = command(namedBy: arguments) else { return nil }
        // The parser takes -help for --help in every command.
        let words = arguments.dropFirst(path.count).prefix { $0 != "--" }.filter {
            $0.count > 2 && $0.hasPrefix("-") && !$0.hasPrefix("--") && $0 != "-help"
                && $0.dropFirst().allSatisfy({ $0.isLetter || $0 == "-" })
        }
        guard !words.isEmpty else { return nil }
        let names = OptionNames(ofCommandAt: path, in: Self.self)
        for argument in words {
            let word = String(argument.dropFirst())
            let meant =
                names.long.contains(word)
                ? word : word.allSatisfy(names.short.contains) ? nil : NearestName.suggestion(for: word, among: names.long)
            guard let meant else { continue }
            return "Error: Unknown option '\(argument)'. Did you mean '--\(meant)'?\n"
                + "Usage: \(usageString(for: command))\n  See '\(([identity.name] + path).joined(separator: " ")) --help' for more information."
        }
        return nil
    }
}

extension PipelineCommand {
    /// The refusal of an option that takes one value given twice (`--shard 0/2 --shard 1/3`),
    /// which the parser would take as the last one, silently: either may be the one meant, and a
    /// shard run on the wrong shard makes the wrong outputs. A flag given twice means what it
    /// means once; an option that takes a list takes each.
    static func optionGivenTwice(in arguments: [String]) -> String? {
        guard let path = command(namedBy: arguments)?.path else { return nil }
        let words = arguments.dropFirst(path.count).prefix { $0 != "--" }
        let named = words.filter { $0.hasPrefix("--") }.map { String($0.dropFirst(2).prefix { $0 != "=" }) }
        // The command tree's description is worked out only for a line that repeats a name.
        guard Set(named).count < named.count else { return nil }
        let single = OptionNames(ofCommandAt: path, in: Self.self).singleValued
        var given: [String: String] = [:]
        var index = words.startIndex
        while index < words.endIndex {
            defer { index += 1 }
            let word = words[index]
            guard word.hasPrefix("--") else { continue }
            let name = String(word.dropFirst(2).prefix { $0 != "=" })
            guard single.contains(name) else { continue }
            let value: String
            if let equals = word.firstIndex(of: "=") {
                value = String(word[word.index(after: equals)...])
            } else {
                // The next word is this option's value, whatever it starts with.
                index += 1
                value = index < words.endIndex ? words[index] : ""
            }
            if let first = given[name] {
                return "error: --\(name) is given twice (\(first.quotedValue), then \(value.quotedValue)): give it once"
                    .escapingControlCharacters
            }
            given[name] = value
        }
        return nil
    }
}

extension PipelineCommand {
    /// The command `arguments` name (`cache stats …`), and its path of names; nil when the
    /// first names none.
    static func command(namedBy arguments: [String]) -> (command: any ParsableCommand.Type, path: [String])? {
        guard let first = arguments.first, var command = commands.first(where: { $0._commandName == first }) else { return nil }
        var path = [first]
        for name in arguments.dropFirst() {
            guard let subcommand = command.configuration.subcommands.first(where: { $0._commandName == name }) else { break }
            command = subcommand
            path.append(name)
        }
        return (command, path)
    }

    /// Whether `name` (`print-pipeline`) is a flag, which takes no value, of the command
    /// `arguments` name. Asked only of a word that may be a file: the command tree's
    /// description is not worked out for every command line.
    private static func isFlag(_ name: String, of arguments: [String]) -> Bool {
        guard let path = command(namedBy: arguments)?.path else { return false }
        return OptionNames(ofCommandAt: path, in: Self.self).flags.contains(name)
    }

    /// What is wrong when an argument before `--` that names a file starts with `-`
    /// (`convert -hero.jpg out/`): the parser reads it as short options, which printed help
    /// and exited 0 for one holding an `h`, or said that IN and OUT were missing. A name with a
    /// `.` or `/` is no bundle of short options; a negative number, a long option's value (not
    /// a flag's, which takes none), is left to the parser.
    static func fileNamedLikeAnOption(in arguments: [String]) -> String? {
        var previous = ""
        for argument in arguments.prefix(while: { $0 != "--" }) {
            defer { previous = argument }
            guard argument.count > 1, argument.hasPrefix("-"), !argument.hasPrefix("--"),
                argument.contains(where: { $0 == "." || $0 == "/" }), Double(argument) == nil
            else { continue }
            if previous.hasPrefix("--"), !isFlag(String(previous.dropFirst(2)), of: arguments) { continue }
            // html's INPUT is the manifest's name for an input, which `./` would not be.
            if command(namedBy: arguments)?.command == HTML.self {
                return "error: '\(argument)' is read as options, not as a name: put -- before it, after every option"
            }
            return "error: '\(argument)' is read as options, not as a file: name a file that starts with '-' as "
                + "./\(argument), or put -- before it, after every option"
        }
        return nil
    }
}

extension ExitCode {
    /// Some inputs failed.
    static let someItemsFailed = ExitCode(1)
    /// The pipeline file or the command line is invalid; nothing ran.
    static let invalidInput = ExitCode(2)
    /// The status after a stop by `signal`, as a shell reports a process it ended: 128 + its
    /// number, so 130 after Ctrl-C (SIGINT) and 143 after SIGTERM.
    static func afterSignal(_ signal: Int32) -> ExitCode {
        ExitCode(128 + signal)
    }
}

/// Writes a line to standard error; a reader gone away is not an error (SIGPIPE is ignored: `Interruption`).
func printError(_ text: String) {
    try? FileHandle.standardError.write(contentsOf: Data((text + "\n").utf8))
}

/// Writes a line of a run's to standard output at once, where `print` would hold a buffer's
/// worth while it is a pipe: `run -v | tee` shows each file as it is written, and a reader gone
/// away (`| head -1`) is found when it goes (`Interruption`), not at the end.
func printOutput(_ text: String) {
    StandardOutput.write(Data((text + "\n").utf8))
}

/// Standard output, whose first failed write is kept: a full disk or a file past `ulimit -f`
/// must not leave a run's `--json` lines or summary cut short with exit status 0. A reader gone
/// away is no failure here: the run stops on it (`Interruption`).
enum StandardOutput {
    private static let failure = Locked<String?>(nil)

    /// Writes `data`, keeping why it could not be written, the first time.
    static func write(_ data: Data) {
        let code = data.withUnsafeBytes { DescriptorWrite.all($0, to: STDOUT_FILENO) }
        guard code != 0, code != EPIPE else { return }
        failure.withLock { $0 = $0 ?? String(cString: strerror(code)) }
    }

    /// Whether a write failed (said, or to be said, by `exitIfAWriteFailed()`).
    static var failed: Bool { failure.withLock { $0 != nil } }

    /// Says on standard error why standard output could not be written, and exits 1, when a
    /// write failed.
    static func exitIfAWriteFailed() throws {
        guard let reason = failure.withLock({ $0 }) else { return }
        printError("error: cannot write to standard output: \(reason); what was printed is incomplete")
        throw ExitCode.failure
    }
}

/// Loads a pipeline file, printing its problems and exiting 2 when it is invalid.
func loadPipeline(_ path: String) throws -> Pipeline {
    try exitingOnInvalidFile { () throws(PipelineFileError) in
        try Pipeline(contentsOf: URL(fileURLWithPath: path), processors: PipelineCommand.processors, displayName: path)
    }
}

/// Runs `body`; a pipeline-file problem (when loading or planning) is printed and ends the
/// command with exit status 2: nothing ran. Problems of the machine alone (a full folder for
/// temporary files) end it with 1, a failure: the file is not at fault.
func exitingOnInvalidFile<Result>(_ body: () throws(PipelineFileError) -> Result) throws -> Result {
    do {
        return try body()
    } catch {
        // One line per problem, whatever names in it hold.
        for problem in error.problems {
            printError(PipelineFileError(file: error.file, problems: [problem]).description.escapingControlCharacters)
        }
        let machines = !error.problems.isEmpty && error.problems.allSatisfy(\.isTheMachines)
        throw machines ? ExitCode.failure : ExitCode.invalidInput
    }
}
