import ArgumentParser
import Foundation
import PipelineKit

extension PipelineCommand {
    struct HTML: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "html",
            abstract:
                "Print a <picture> element for an input of a manifest, or for every input: a <source> per format, an <img> with width, height, srcset, sizes and the placeholder.",
            discussion: """
                The manifest is the JSON file a run writes when the pipeline file has a "manifest". With no input \
                named, every input's <picture> is printed in the manifest's order, each after an HTML comment \
                naming the input; an input without the output asked for (--output) is left out. With --out DIR, \
                each input's <picture> goes to a file of its own in DIR (made when missing), named after the \
                input's stem: photo.html. Inputs of one stem take photo.html, photo-2.html, photo-3.html… in the \
                manifest's order, and a name that would be the manifest itself is passed over the same way. Each \
                file is written whole or not at all. Exit status 0 when the markup was printed or written; 1 when \
                a file could not be written; 2 when the manifest cannot be read, has no such input or output, or \
                --out names a file.
                """
        )

        @Argument(help: "The manifest a run wrote.", completion: .file(extensions: ["json"]))
        var manifest: String

        @Argument(
            help:
                "The input, as the manifest names it (or the end of its path, when only one input's path ends so); every input when left out."
        )
        var input: String?

        @ArgumentParser.Option(
            help:
                "The output to show, when an input has several (default: the one with the most files, the first by name among equals; never a tile pyramid)."
        )
        var output: String?

        @ArgumentParser.Option(help: "The sizes attribute: how wide the image is shown.")
        var sizes = "100vw"

        @ArgumentParser.Option(help: "The alt text.")
        var alt = ""

        @Flag(help: "Load at once (loading=\"eager\"), for an image in the first screen.")
        var eager = false

        @ArgumentParser.Option(
            name: .customLong("out"),
            help: ArgumentHelp(
                "Write one file per input into this folder (photo.html, photo-2.html for a second photo…) instead of printing.",
                valueName: "dir"))
        var outDirectory: String?

        func validate() throws {
            if let outDirectory, let address = ObjectStores.notALocalPath(outDirectory) {
                throw ValidationError(
                    "--out \(outDirectory): the files are written on this machine, so give a local folder, not \(address)")
            }
        }

        func run() throws {
            let document: ImageManifest
            do {
                document = try ImageManifest.read(from: URL(fileURLWithPath: manifest))
            } catch {
                let reason = Self.pipelineFileInstead(manifest) ?? "not a manifest pipeline can read: \(ErrorText.reason(error))"
                printError("\(manifest): \(reason)".escapingControlCharacters)
                throw ExitCode.invalidInput
            }
            let entries = try chosenEntries(of: document)
            let markup = PictureMarkup(sizes: sizes, alt: alt, loading: eager ? "eager" : "lazy")
            var snippets: [(entry: ImageManifest.Input, html: String)] = []
            for entry in entries {
                let names = entry.outputs.keys.sorted()
                guard let name = output ?? Self.defaultOutput(of: entry), let chosen = entry.outputs[name] else {
                    // Over every input, one without the output (an output for some inputs only) is left out.
                    if input == nil { continue }
                    if output == nil {
                        printError(
                            "\(manifest): \(entry.source) has only tile pyramids (\(names.joined(separator: ", ")))\(Self.pyramidsHaveNoPicture)"
                                .escapingControlCharacters)
                    } else {
                        printError(
                            "\(manifest): \(entry.source) has no output \"\(output ?? "")\" (it has \(names.joined(separator: ", ")))"
                                .escapingControlCharacters)
                    }
                    throw ExitCode.invalidInput
                }
                guard let html = markup.html(for: chosen) else {
                    let reason =
                        chosen.tiles.map { " is a tile pyramid (\($0.url))\(Self.pyramidsHaveNoPicture)" } ?? " has no files"
                    printError("\(manifest): \(entry.source) → \(name)\(reason)".escapingControlCharacters)
                    throw ExitCode.invalidInput
                }
                if let failed = chosen.failed {
                    // The markup is still right for the files made; the user learns the set is short.
                    printError(
                        "warning: \(manifest): \(entry.source) → \(name) lacks files its run failed to make (\(failed.joined(separator: "; "))): the markup names only the files made"
                            .escapingControlCharacters)
                }
                snippets.append((entry, html))
            }
            if snippets.isEmpty {
                let missing =
                    entries.isEmpty
                    ? "lists no input"
                    : output.map { "no input has an output \"\($0)\"" } ?? "every output is a tile pyramid\(Self.pyramidsHaveNoPicture)"
                printError("\(manifest): \(missing)".escapingControlCharacters)
                throw ExitCode.invalidInput
            }
            if let outDirectory {
                try write(snippets, into: outDirectory)
            } else if input != nil {
                print(snippets[0].html, terminator: "")
            } else {
                for snippet in snippets {
                    print(Self.comment(naming: snippet.entry.source) + "\n" + snippet.html, terminator: "")
                }
            }
        }

        /// What to say when `path` is a pipeline file (an object with `outputs` and no `pipeline`),
        /// given where its manifest belongs: which manifest its run writes, that it asks for none,
        /// or, when it does not load, how to find out why. Nil when it is not one.
        static func pipelineFileInstead(_ path: String) -> String? {
            guard let data = FileManager.default.contents(atPath: path),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                object["outputs"] != nil, object["pipeline"] == nil
            else { return nil }
            guard
                let pipeline = try? Pipeline(
                    contentsOf: URL(fileURLWithPath: path), processors: PipelineCommand.processors, displayName: path)
            else {
                return "a pipeline file, not a manifest; it does not load as it is (`pipeline validate` says why), "
                    + "so which manifest its run writes is not known"
            }
            guard let written = pipeline.definition.manifest?.file.path else {
                return "a pipeline file, not a manifest; it has no \"manifest\" section, so its run writes none"
            }
            let shown = OutputLocations.shortened(written, relativeTo: FileManager.default.currentDirectoryPath)
            return "a pipeline file, not a manifest; its run writes the manifest to \(shown)"
        }

        /// The output shown when none is named: the one with the most files, so a responsive set
        /// (with its art direction) comes before a single thumbnail; the first by name among equals.
        /// Nil when every output is a tile pyramid, which has no `<picture>`.
        static func defaultOutput(of entry: ImageManifest.Input) -> String? {
            let files = { (output: ImageManifest.Output) in
                (output.formats + (output.art ?? []).flatMap(\.formats)).reduce(0) { $0 + $1.files.count }
            }
            // `max(by:)` keeps the first of equals, and the names are sorted.
            return entry.outputs.filter { $0.value.tiles == nil }.sorted { $0.key < $1.key }.max { files($0.value) < files($1.value) }?.key
        }

        /// Why a tile pyramid gets no markup, after its name.
        static let pyramidsHaveNoPicture = ": a zooming viewer opens a pyramid from its URL; html writes <picture> markup for image files"

        /// The named input's entry, or every entry in the manifest's order when none is named.
        private func chosenEntries(of document: ImageManifest) throws -> [ImageManifest.Input] {
            guard let input else { return document.inputs }
            let candidates = document.candidates(for: input)
            if candidates.count > 1 {
                // Picking one would print another image's markup without a word: the user names it.
                printError(
                    "\(manifest): \"\(input)\" is ambiguous: \(candidates.count) inputs end in it; give the full path of one:"
                        .escapingControlCharacters)
                for candidate in candidates { printError("  \(candidate.source)".escapingControlCharacters) }
                throw ExitCode.invalidInput
            }
            guard let entry = candidates.first else {
                let known = document.inputs.prefix(5).map(\.source).joined(separator: ", ")
                let has =
                    document.inputs.isEmpty
                    ? "it has none" : "it has \(document.inputs.count): \(known)\(document.inputs.count > 5 ? ", …" : "")"
                printError("\(manifest): no input \"\(input)\" (\(has))".escapingControlCharacters)
                throw ExitCode.invalidInput
            }
            return [entry]
        }

        /// An HTML comment naming `source` on one line: a comment may not hold `--`, which a file
        /// name may, and control characters are written as escapes, so that a name cannot
        /// recolour the terminal the markup is printed to.
        static func comment(naming source: String) -> String {
            var text = source.escapingControlCharacters
            while text.contains("--") { text = text.replacingOccurrences(of: "--", with: "- -") }
            return "<!-- \(text) -->"
        }
    }
}
