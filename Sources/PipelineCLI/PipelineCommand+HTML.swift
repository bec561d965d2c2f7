import ArgumentParser
import Foundation
import PipelineKit

extension PipelineCommand {
    struct HTML: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "html",
            abstract:
                "Print a <picture> element for one input of a manifest: a <source> per format, an <img> with width, height, srcset, sizes and the placeholder.",
            discussion:
                "The manifest is the JSON file a run writes when the pipeline file has \"manifest\": {\"path\": …, \"urlPrefix\": …}."
        )

        @Argument(help: "The manifest a run wrote.")
        var manifest: String

        @Argument(help: "The input, as the manifest names it (or the end of its path, when only one input's path ends so).")
        var input: String

        @ArgumentParser.Option(help: "The output to show, when the input has several (default: the first by name).")
        var output: String?

        @ArgumentParser.Option(help: "The sizes attribute: how wide the image is shown.")
        var sizes = "100vw"

        @ArgumentParser.Option(help: "The alt text.")
        var alt = ""

        @Flag(help: "Load at once (loading=\"eager\"), for an image in the first screen.")
        var eager = false

        func run() throws {
            let document: ImageManifest
            do {
                document = try ImageManifest.read(from: URL(fileURLWithPath: manifest))
            } catch {
                printError("\(manifest): not a manifest pipeline can read: \(error.localizedDescription)")
                throw ExitCode.invalidInput
            }
            let candidates = document.candidates(for: input)
            if candidates.count > 1 {
                // Picking one would print another image's markup without a word: the user names it.
                printError("\(manifest): \"\(input)\" is ambiguous: \(candidates.count) inputs end in it; give the full path of one:")
                for candidate in candidates { printError("  \(candidate.source)") }
                throw ExitCode.invalidInput
            }
            guard let entry = candidates.first else {
                let known = document.inputs.prefix(5).map(\.source).joined(separator: ", ")
                printError(
                    "\(manifest): no input \"\(input)\" (it has \(document.inputs.count): \(known)\(document.inputs.count > 5 ? ", …" : ""))"
                )
                throw ExitCode.invalidInput
            }
            let names = entry.outputs.keys.sorted()
            guard let name = output ?? names.first, let chosen = entry.outputs[name] else {
                printError("\(manifest): \(entry.source) has no output \"\(output ?? "")\" (it has \(names.joined(separator: ", ")))")
                throw ExitCode.invalidInput
            }
            let markup = PictureMarkup(sizes: sizes, alt: alt, loading: eager ? "eager" : "lazy")
            guard let html = markup.html(for: chosen) else {
                printError("\(manifest): \(entry.source) → \(name) has no files")
                throw ExitCode.invalidInput
            }
            print(html, terminator: "")
        }
    }
}
