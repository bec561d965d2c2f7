import Foundation
import PipelineKit
import Vips

/// A problem with `pipeline convert`'s arguments found before any pipeline is built, naming the flag.
struct ConvertArgumentError: Error, CustomStringConvertible {
    /// The flag (or `IN`, `OUT`) at fault.
    let flag: String
    let description: String

    /// `message` may quote an IN or OUT as given: a URL's secrets are hidden in it, as in every
    /// message pipeline prints.
    init(_ flag: String, _ message: String) {
        self.flag = flag
        description = "\(flag): \(CredentialRedaction().redactURLs(in: message))"
    }
}

/// The pipeline file `pipeline convert` stands for, built from its arguments: its inputs, one
/// output with an optional resize step and one encoder. It is checked and run as any file is.
struct ConvertDocument {
    /// The output's index in the document, and so in the JSON paths of its problems.
    static let outputPath = "outputs[0]"

    /// Where each flag lands in the document, the longest first, so that a problem found there
    /// names the flag the user wrote rather than a JSON path the user never saw.
    static let flags: [(path: String, flag: String)] = [
        ("outputs[0].encode.quality.ssimulacra2", "--ssimulacra2"),
        ("outputs[0].steps[0].resize.position", "--position"),
        ("outputs[0].steps[0].resize.height", "--height"),
        ("outputs[0].steps[0].resize.width", "--width"),
        ("outputs[0].steps[0].resize.fit", "--fit"),
        ("outputs[0].encode.quality", "--quality"),
        ("outputs[0].encode.format", "--format"),
        ("outputs[0].encode.keep", "--keep"),
        ("outputs[0].encode", "--format"),
        ("outputs[0].path", "OUT"),
        ("decompress.allowUntrusted", "--allow-untrusted"),
        ("decompress.maxPixels", "--max-pixels"),
        ("decompress.maxFrames", "--max-frames"),
        ("inputs", "IN"),
    ]

    let document: [String: Any]

    init(_ command: PipelineCommand.Convert) throws(ConvertArgumentError) {
        var resize: [String: Any] = [:]
        if let width = command.width { resize["width"] = try Self.positiveInteger(width, flag: "--width") }
        if let height = command.height { resize["height"] = try Self.positiveInteger(height, flag: "--height") }
        if resize.isEmpty, command.fit != nil { throw ConvertArgumentError("--fit", "needs --width or --height") }
        // With one of them, the resize keeps the aspect ratio: it crops nothing and places nothing.
        if command.position != nil, resize.count < 2 { throw ConvertArgumentError("--position", "needs --width and --height") }
        if let fit = command.fit { resize["fit"] = fit }
        if let position = command.position { resize["position"] = try Self.position(position) }

        for input in command.inputs where !Self.isGlob(input) && !Self.isURL(input) {
            var inputIsFolder: ObjCBool = false
            // A one-off command names its file: one missing is the command line's mistake, said
            // once, as a batch file's plan would only warn of it and then fail it.
            guard FileManager.default.fileExists(atPath: input, isDirectory: &inputIsFolder) else {
                // A link that leads nowhere is there, but names no file; a folder on the way that
                // may not be searched hides what is in it.
                let reason =
                    InputFile.brokenLink(at: input).map { "\(input.quotedValue) is \($0)" }
                    ?? InputFile.unreachable(at: input).map { "\(input.quotedValue) \($0)" }
                    ?? "there is no file \(input.quotedValue)"
                throw ConvertArgumentError("IN", reason)
            }
            if inputIsFolder.boolValue {
                let folder = input.hasSuffix("/") ? String(input.dropLast()) : input
                throw ConvertArgumentError(
                    "IN", "\(input.quotedValue) is a folder: give a glob of its files, quoted, such as '\(Glob.literal(folder))/*.jpg'")
            }
            // A pipe (`<(curl …)`) or a device: the run reads only regular files, and would fail it
            // once fetched. Standard input takes such bytes.
            var info = stat()
            if stat(input, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
                throw ConvertArgumentError(
                    "IN", "\(input.quotedValue) is a pipe or a device, not a file: send its bytes to standard input and give - as IN")
            }
        }
        // Taken as a path, it would be a folder named `http:` beside IN.
        if ["http://", "https://"].contains(where: command.output.lowercased().hasPrefix) {
            throw ConvertArgumentError(
                "OUT",
                "\(command.output.quotedValue) is an http URL, where convert cannot write: "
                    + "give a file, a folder, a path template, an s3:// URL or -")
        }
        let isTemplate = command.output.contains("{")
        var isFolder: ObjCBool = false
        let folder =
            command.output.hasSuffix("/")
            || (!isTemplate && FileManager.default.fileExists(atPath: command.output, isDirectory: &isFolder) && isFolder.boolValue)
        if !folder && !isTemplate {
            let oneFile =
                "so OUT must be a folder (one that exists, or a path ending in /) "
                + "or a path template such as out/{stem}.webp, not the one file \"\(command.output)\""
            if command.inputs.count > 1 {
                throw ConvertArgumentError("OUT", "\(command.inputs.count) INs were given (as a shell gives an unquoted glob), " + oneFile)
            }
            if let glob = command.inputs.first(where: Self.isGlob) {
                throw ConvertArgumentError("OUT", "IN \"\(glob)\" is a glob, " + oneFile)
            }
        }
        let path = folder ? (command.output.hasSuffix("/") ? command.output : command.output + "/") + "{stem}.{format}" : command.output
        let format: String
        if let named = command.format {
            // Any spelling an extension may have (`jpg`, `tif`, `heif`) names its format here too.
            format = EncoderSettings.Format(fileExtension: named)?.rawValue ?? named
        } else if let own = try Self.format(of: path) {
            format = own
        } else if let kept = Self.format(ofInputs: command.inputs) {
            // OUT names none (a folder, `{format}`): the inputs' is kept, as sharp-cli does.
            format = kept.rawValue
        } else {
            let ins = command.inputs.count == 1 ? "does IN \(command.inputs[0].quotedValue)" : "do the \(command.inputs.count) INs"
            throw ConvertArgumentError(
                "--format",
                "OUT \"\(path)\" does not name a format, nor \(ins) by one extension pipeline writes: give --format (jpeg, png, webp, avif, …)"
            )
        }

        if let known = EncoderSettings.Format(rawValue: format) {
            // Named by the flag: the pipeline file's problem would be the shape of `encode.quality`.
            if command.quality != nil, !known.takesQuality {
                throw ConvertArgumentError("--quality", "\(known.rawValue) has no quality setting")
            }
            // A TIFF's quality is that of a lossy compression, which convert does not choose.
            if command.quality != nil, known == .tiff {
                throw ConvertArgumentError("--quality", "convert writes a tiff without lossy compression, which a quality would set")
            }
            if command.ssimulacra2 != nil, !QualityTarget.formats.contains(known) {
                throw ConvertArgumentError(
                    "--ssimulacra2", "\(known.rawValue) has no quality to search for a score: a target is for \(QualityTarget.formatList)")
            }
        }
        if command.quality != nil, command.ssimulacra2 != nil {
            throw ConvertArgumentError("--ssimulacra2", "cannot be used with --quality: give a fixed quality or a target score")
        }
        var encode: [String: Any] = ["format": format]
        if let quality = command.quality {
            // A PNG's is its palette's, and asks for one (as the pipeline file reads it).
            encode["quality"] = try Self.integer(quality, flag: "--quality")
        }
        if let target = command.ssimulacra2 {
            // Written as a person writes a score: Swift would also read `0x50` (80), `1e2` and `inf`.
            guard target.wholeMatch(of: /[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)/) != nil, let score = Double(target) else {
                throw ConvertArgumentError("--ssimulacra2", "expected a number, got \"\(target)\"")
            }
            encode["quality"] = ["ssimulacra2": score]
        }
        if let keep = command.keep {
            let kinds = keep.split(separator: ",", omittingEmptySubsequences: false).map { String($0) }
            // An empty list would keep nothing, not even the profile: said with `none`, not by a slip.
            guard !kinds.contains("") else {
                throw ConvertArgumentError("--keep", "expected all, none or a list such as icc,exif, got \(keep.quotedValue)")
            }
            if kinds.count > 1, let alone = kinds.first(where: { $0 == "all" || $0 == "none" }) {
                throw ConvertArgumentError(
                    "--keep", "\(alone) stands alone, not in a list: give --keep \(alone), or a list such as icc,exif")
            }
            encode["keep"] = keep == "all" || keep == "none" ? keep : kinds
        }
        var output: [String: Any] = ["name": "convert", "encode": encode, "path": path]
        if !resize.isEmpty { output["steps"] = [["resize": resize]] }
        var document: [String: Any] = [
            "version": PipelineFormat.version, "name": "convert", "inputs": command.inputs.map(Self.inputPattern), "outputs": [output],
        ]
        var decompress: [String: Any] = [:]
        if let formats = command.allowUntrusted {
            decompress["allowUntrusted"] = formats.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        }
        if let maxPixels = command.maxPixels { decompress["maxPixels"] = try Self.positiveInteger(maxPixels, flag: "--max-pixels") }
        if let maxFrames = command.maxFrames { decompress["maxFrames"] = try Self.positiveInteger(maxFrames, flag: "--max-frames") }
        if !decompress.isEmpty { document["decompress"] = decompress }
        self.document = document
    }

    /// `--position`'s value as the resize takes it: a name (`attention`, `north`, …) as it is,
    /// a point `X,Y` (fractions of the width and height) as `{"x": X, "y": Y}`. `focus` reads a
    /// file of points, which a one-off conversion has none of: a point says the same for one input.
    static func position(_ value: String) throws(ConvertArgumentError) -> Any {
        if value == "focus" {
            throw ConvertArgumentError(
                "--position",
                "focus reads a pipeline file's focusPoints; give the point itself as X,Y (0 to 1 from the left and the top), such as 0.3,0.4"
            )
        }
        let parts = value.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return value }
        guard let x = Double(parts[0].trimmingCharacters(in: .whitespaces)), let y = Double(parts[1].trimmingCharacters(in: .whitespaces)),
            x.isFinite, y.isFinite
        else { throw ConvertArgumentError("--position", "expected a point X,Y of two numbers, got \"\(value)\"") }
        for (name, coordinate, written) in [("X", x, parts[0]), ("Y", y, parts[1])] where !(0...1).contains(coordinate) {
            throw ConvertArgumentError(
                "--position",
                "\(name) is \(written.trimmingCharacters(in: .whitespaces)) in \"\(value)\": a point's X and Y are from 0 to 1")
        }
        return ["x": x, "y": y]
    }

    /// The document as a pipeline file: pretty JSON with its keys in a stable order. Without
    /// `journal`, it keeps neither a journal (`"incremental": false`) nor a cache of fetched
    /// bytes: a one-off conversion leaves no `.pipeline-cache` in the folder it was run from,
    /// which the file printed for growing into a pipeline of its own should not say.
    func jsonText(journal: Bool = true) throws(ConvertArgumentError) -> String {
        var document = self.document
        if !journal {
            document["incremental"] = false
            document["cache"] = ["enabled": false]
        }
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]),
            let text = String(data: data, encoding: .utf8)
        else { throw ConvertArgumentError("IN", "cannot be written into a pipeline file") }
        return text
    }

    /// The first of `plan`'s local inputs that is an animation its output keeps (a GIF, WebP or
    /// AVIF of several frames, written as GIF, WebP or AVIF), with its frames. A quality target scores
    /// still images, so a run would fail each such input at its encode, after the searches of
    /// the others, with a hint in a pipeline file's words; convert names its flag first.
    static func firstKeptAnimation(in plan: RunPlan) -> (input: String, frames: Int)? {
        guard let output = plan.definition.outputs.first, output.encoder.format.animates else { return nil }
        for item in plan.items.lazy.filter({ !$0.input.isRemote }).prefix(PlanExplanation.headerLimit) {
            // Only a regular file: a loader sniffing a FIFO or a device would wait or read for ever.
            var info = stat()
            guard stat(item.input.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
                let frames = AnimatedFile.frames(ofFile: item.input.path, settings: plan.definition.decompress)
            else { continue }
            return (item.input.displayName, frames)
        }
        return nil
    }

    /// The problems a plan finds with `command`'s inputs (a glob that matches no files), for when
    /// no format could be told from them: a glob whose extension is a typo (`*.jgp`) names none,
    /// and the typo, not --format, is what to mend.
    static func inputProblems(of command: PipelineCommand.Convert, baseDirectory: URL) -> [PipelineFileError.Problem] {
        var probe = command
        probe.format = EncoderSettings.Format.png.rawValue
        guard let json = try? ConvertDocument(probe).jsonText(journal: false) else { return [] }
        do throws(PipelineFileError) {
            _ = try Pipeline(json: json, baseDirectory: baseDirectory, processors: PipelineCommand.processors).plan()
            return []
        } catch {
            return error.problems.filter { $0.path == "inputs" || $0.path.hasPrefix("inputs[") }
        }
    }

    /// A problem of the built document, with the flag in place of its JSON path.
    static func describe(_ problem: PipelineFileError.Problem) -> String {
        guard
            let match = flags.first(where: {
                problem.path == $0.path || problem.path.hasPrefix($0.path + ".") || problem.path.hasPrefix($0.path + "[")
            })
        else { return problem.description }
        // convert has no `allowEmpty` to offer: IN names the inputs alone.
        var message =
            match.flag == "IN" && problem.message.hasSuffix(RunPlan.emptyRunExplanation)
            ? String(problem.message.dropLast(RunPlan.emptyRunExplanation.count)) : problem.message
        // nor a `caseInsensitive` to set: the glob itself can be written as the files are named.
        if match.flag == "IN" {
            message = message.replacingOccurrences(of: #" ("caseInsensitive": true)"#, with: ": write the glob in their case")
        }
        // convert takes a point where a file takes `focus` (`position(_:)`).
        if match.flag == "--position", message.hasPrefix("unknown value") {
            message = message.replacingOccurrences(of: #", "focus""#, with: "")
            // The point is one more choice, listed with the names, before any suggestion.
            let suggestion = message.range(of: "; did you mean")?.lowerBound ?? message.endIndex
            message.insert(contentsOf: ", or a point X,Y", at: suggestion)
        }
        return "\(match.flag): \(message)"
    }

    /// A run's failure as `convert` says it: a setting the failure names is named by its flag, as
    /// a convert user has no file to set it in (`add "svg" to --allow-untrusted`).
    static func describe(failure: String) -> String {
        // The one step convert makes is the resize its flags ask for.
        let settings = flags.filter { $0.path.hasPrefix("decompress.") } + [("steps[0].resize", "the resize --width/--height ask for")]
        // An animation met only once fetched (a URL's) with --ssimulacra2, which a local file's
        // header refuses before the run.
        let described = failure.replacingOccurrences(of: QualityTarget.animationAdvice, with: "give --quality instead")
        return settings.reduce(described) { text, setting in text.replacingOccurrences(of: setting.path, with: setting.flag) }
    }

    /// Whether IN is a glob: a path, not a URL, with a wildcard, a brace or an escape, that is
    /// not the name of a file (`photo [1].jpg`, as a shell's completion gives it).
    static func isGlob(_ input: String) -> Bool {
        !isURL(input) && Glob.isPattern(input) && !FileManager.default.fileExists(atPath: input)
    }

    /// The pipeline file's entry for IN: a file's name as a pattern that names it alone.
    static func inputPattern(_ input: String) -> String {
        isURL(input) || isGlob(input) ? input : Glob.literal(input)
    }

    static func isURL(_ text: String) -> Bool {
        ["http://", "https://", "s3://"].contains { text.lowercased().hasPrefix($0) }
    }

    /// The format OUT's extension names; nil when OUT has no extension, or `{format}` or `{ext}`
    /// (IN's own) for one.
    static func format(of path: String) throws(ConvertArgumentError) -> String? {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), name.index(after: dot) < name.endIndex else { return nil }
        let ext = name[name.index(after: dot)...].lowercased()
        if ext == "{format}" || ext == "{ext}" { return nil }
        guard let format = EncoderSettings.Format(fileExtension: ext) else {
            let known = EncoderSettings.Format.fileExtensionList
            throw ConvertArgumentError(
                "OUT", "\"\(path)\" ends in .\(ext), which names no format pipeline writes: end it in one of \(known), or give --format")
        }
        return format.rawValue
    }

    /// The one format the INs' extensions name (`format(ofInput:)`), when they all name the same.
    static func format(ofInputs inputs: [String]) -> EncoderSettings.Format? {
        let formats = inputs.map(format(ofInput:))
        guard let first = formats.first ?? nil, formats.allSatisfy({ $0 == first }) else { return nil }
        return first
    }

    /// The format IN's extension names, when pipeline writes it: a file's, a URL's path's (its
    /// last segment's `;v=1` is no part of the name, as in `{stem}`), or a glob's when its
    /// extension is written out (`photos/*.png`) or is a set of spellings of one format
    /// (`photos/*.{jpg,jpeg,JPG}`, not `photos/*.{jpg,png}`).
    static func format(ofInput input: String) -> EncoderSettings.Format? {
        let path = isURL(input) ? CredentialRedaction.pathWithoutParameters(of: URL(string: input)) : input
        guard let name = path.split(separator: "/").last, let dot = name.lastIndex(of: ".") else { return nil }
        var ext = name[name.index(after: dot)...]
        let isSet = ext.hasPrefix("{") && ext.hasSuffix("}") && ext.count > 2
        if isSet { ext = ext.dropFirst().dropLast() }
        let spellings = isSet ? ext.split(separator: ",", omittingEmptySubsequences: false) : [ext]
        guard !ext.isEmpty, !ext.contains(where: { "*?[]{}\\".contains($0) || (!isSet && $0 == ",") }) else { return nil }
        let formats = spellings.map { EncoderSettings.Format(fileExtension: $0.lowercased()) }
        guard let first = formats.first ?? nil, formats.allSatisfy({ $0 == first }) else { return nil }
        return first
    }

    static func positiveInteger(_ text: String, flag: String) throws(ConvertArgumentError) -> Int {
        guard let value = Int(text), value > 0 else { throw ConvertArgumentError(flag, "expected a positive integer, got \"\(text)\"") }
        return value
    }

    static func integer(_ text: String, flag: String) throws(ConvertArgumentError) -> Int {
        guard let value = Int(text) else { throw ConvertArgumentError(flag, "expected an integer, got \"\(text)\"") }
        return value
    }
}
