import ArgumentParser
import Foundation
import PipelineKit

/// `convert`'s IN and OUT given as `-`: standard input and standard output, as ImageMagick and
/// sharp-cli take them. The run reads and writes files, so the image read from standard input
/// is put in a private folder first (named `stdin`, as messages then name it), and the file
/// made for standard output is made in one and sent once the run has succeeded: a failed run
/// sends nothing.
struct ConvertStreams {
    /// The private folder, or nil when neither is `-`.
    let folder: URL?
    /// The INs as the run reads them: the staged file's absolute path, or the INs as given.
    let inputs: [String]
    /// OUT as the run writes it: the private folder's, absolute, or OUT as given (made absolute
    /// when the run's folder is the private one).
    let output: String
    /// The folder the one-off's paths are relative to: the private one when standard input is
    /// read (so that the input is named `stdin`), else the current one.
    let baseDirectory: URL
    /// Whether the file made goes to standard output.
    let sendsOutput: Bool
    /// The format standard input's bytes are in, when IN is `-` and neither `--format` nor
    /// OUT's extension names the output's: the format it keeps, as a file's extension would.
    let inputFormat: String?

    /// The most bytes read from standard input: the largest input a pipeline file takes by default.
    static let maxBytes = StageDefaults.maxBytes

    /// Reads standard input when IN is `-`, into a private folder.
    ///
    /// - Throws: `ConvertArgumentError` naming IN or OUT when a stream is a terminal, holds too
    ///   much, or cannot say the format (standard input's, when it is in none pipeline
    ///   writes); when OUT is `-` for a glob or several INs, or `-` is one
    ///   of several INs; when the folder cannot be made.
    ///
    /// A signal from when the folder is made ends the command with the folder removed
    /// (`ending(removing:)`).
    init(_ command: PipelineCommand.Convert, interruption: Interruption) throws(ConvertArgumentError) {
        let current = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        Self.removeLeftFolders()
        let readsInput = command.inputs.contains("-")
        sendsOutput = command.output == "-"
        if readsInput, command.inputs.count > 1 {
            throw ConvertArgumentError("IN", "- (standard input) is one image: it cannot be one of several INs")
        }
        guard readsInput || sendsOutput else {
            folder = nil
            inputs = command.inputs
            output = command.output
            baseDirectory = current
            inputFormat = nil
            return
        }
        if command.printPipeline {
            throw ConvertArgumentError("--print-pipeline", "a pipeline file cannot read standard input or write standard output (-)")
        }
        if sendsOutput {
            if isatty(STDOUT_FILENO) == 1 {
                throw ConvertArgumentError("OUT", "standard output is a terminal: send it to a file or a pipe (> out.webp)")
            }
            if command.verbose || command.json {
                throw ConvertArgumentError(command.json ? "--json" : "--verbose", "standard output carries the image (OUT -)")
            }
            if command.inputs.count > 1 {
                throw ConvertArgumentError("OUT", "\(command.inputs.count) INs cannot all go to standard output")
            }
            if !readsInput, ConvertDocument.isGlob(command.inputs[0]) {
                throw ConvertArgumentError(
                    "OUT", "IN \(command.inputs[0].quotedValue) is a glob: its images cannot all go to standard output")
            }
            if command.format == nil, !readsInput, ConvertDocument.format(ofInput: command.inputs[0]) == nil {
                throw ConvertArgumentError("--format", "standard output (OUT -) has no extension to name the format: give --format")
            }
        }
        // Standard input has no extension: its bytes say the format it keeps.
        let keepsInputFormat =
            readsInput && command.format == nil
            && (sendsOutput || EncoderSettings.Format(fileExtension: URL(fileURLWithPath: command.output).pathExtension) == nil)
        var template = Array((NSTemporaryDirectory() + "/" + Self.folderPrefix + TemporaryFileSweeper.ownerTag + ".XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw ConvertArgumentError(
                "IN", "cannot make a private folder in \(NSTemporaryDirectory()): \(String(cString: strerror(errno)))")
        }
        let folder = URL(fileURLWithPath: String(cString: made))
        self.folder = folder
        interruption.hand(to: Self.ending(removing: folder))
        if readsInput {
            let staged = folder.appendingPathComponent("stdin")
            do {
                try Self.readStandardInput(into: staged)
                inputFormat = keepsInputFormat ? try Self.format(ofContent: staged) : nil
            } catch {
                try? FileManager.default.removeItem(at: folder)
                throw error
            }
            inputs = [staged.path]
            baseDirectory = folder
        } else {
            inputs = command.inputs
            baseDirectory = current
            inputFormat = nil
        }
        if sendsOutput {
            output = folder.appendingPathComponent("out").path + "/"
        } else {
            let absolute = command.output.hasPrefix("/") ? command.output : current.appendingPathComponent(command.output).path
            // A final "/" says OUT is a folder, to be made when missing: kept, as the URL drops it.
            output = command.output.hasSuffix("/") && !absolute.hasSuffix("/") ? absolute + "/" : absolute
        }
    }

    /// The start of the name of a private folder of a convert, before its owner's tag.
    static let folderPrefix = "pipeline-convert-"

    /// Removes the private folders of converts killed before they could (SIGKILL, a power
    /// cut), whose staged standard input may be a hundred megabytes: each is named by its
    /// process, and one of a process of this machine that is gone is left over.
    static func removeLeftFolders() {
        let temporary = NSTemporaryDirectory()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: temporary) else { return }
        for name in names where name.hasPrefix(folderPrefix) {
            let owner = name.dropFirst(folderPrefix.count).prefix { $0 != "." }
            if TemporaryFileSweeper.ownerIsGone(owner) { try? FileManager.default.removeItem(atPath: temporary + "/" + name) }
        }
    }

    /// Standard input, whole, into `file`.
    private static func readStandardInput(into file: URL) throws(ConvertArgumentError) {
        if isatty(STDIN_FILENO) == 1 {
            throw ConvertArgumentError("IN", "standard input is a terminal: send an image to it (< photo.jpg)")
        }
        var bytes = Data()
        while true {
            let chunk: Data?
            do {
                chunk = try FileHandle.standardInput.read(upToCount: 1 << 20)
            } catch {
                throw ConvertArgumentError("IN", "cannot read standard input: \(ErrorText.reason(error))")
            }
            guard let chunk, !chunk.isEmpty else { break }
            bytes += chunk
            if bytes.count > maxBytes {
                throw ConvertArgumentError("IN", "standard input holds more than \(Units.text(bytes: maxBytes)), the largest input taken")
            }
        }
        if bytes.isEmpty { throw ConvertArgumentError("IN", "standard input is empty") }
        do {
            try bytes.write(to: file)
        } catch {
            throw ConvertArgumentError("IN", "cannot keep standard input in \(file.path): \(ErrorText.reason(error))")
        }
    }

    /// The format of the image staged from standard input, as its bytes say.
    private static func format(ofContent file: URL) throws(ConvertArgumentError) -> String {
        guard let format = EncoderSettings.Format(contentOf: file.path) else {
            throw ConvertArgumentError(
                "--format", "standard input (IN -) is in no format pipeline writes, or no image it reads: give --format")
        }
        return format.rawValue
    }

    /// Sends the file the run made to standard output, when OUT is `-`.
    func sendOutput() throws {
        guard sendsOutput, let folder else { return }
        let made = folder.appendingPathComponent("out")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: made.path))?.filter { !$0.hasPrefix(".") } ?? []
        guard names.count == 1 else { throw CocoaError(.fileNoSuchFile) }
        let image = try Data(contentsOf: made.appendingPathComponent(names[0]))
        // By descriptor, so that the system's reason comes through (EPIPE: the reader went
        // away), where FileHandle gives only Foundation's "could not be completed".
        let failure = image.withUnsafeBytes { DescriptorWrite.all($0, to: STDOUT_FILENO) }
        if failure != 0 { throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO) }
    }

    /// What a signal does while no run goes (standard input read, the image sent): there is no
    /// work to finish, so the command ends at once with the signal's status, `folder` removed.
    /// A reader gone away mid-image ends it too, quietly.
    static func ending(removing folder: URL?) -> @Sendable (Int32) -> Void {
        { signal in
            if let folder { try? FileManager.default.removeItem(at: folder) }
            if signal != SIGPIPE { printError(Interruption.describe(signal)) }
            ProcessEnd.exit(ExitCode.afterSignal(signal).rawValue)
        }
    }

    /// Removes the private folder and what is in it.
    func remove() {
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }
}
