import ArgumentParser
import PipelineKit
import VipsOperation

extension PipelineCommand {
    struct Plugins: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "List the processors a pipeline's steps may use, with their options, then every other key of a pipeline file with its default."
        )

        @Flag(help: "List the libvips operations the `vips` step can run, with their arguments, instead.")
        var vips = false

        @Flag(help: "Print the reference of every step and its options as Markdown instead: docs/processors.md.")
        var markdown = false

        func validate() throws {
            if vips && markdown { throw ValidationError("--vips and --markdown cannot be used together") }
        }

        func run() {
            if vips { return listVipsOperations() }
            let processors = PipelineCommand.processors
            if markdown { return print(Reference.processorsMarkdown(processors: processors), terminator: "") }
            print(Self.listing(of: processors), terminator: "")
            print("The pipeline file's keys (docs/pipeline-file.md, or `pipeline schema --markdown`, describes each):")
            print(Reference.keyListing(processors: processors), terminator: "")
        }

        /// Every processor of `registry` with its options, as `pipeline plugins` prints them.
        static func listing(of registry: ProcessorRegistry) -> String {
            var text = ""
            for processor in registry.processors {
                text += "\(processor.name): \(processor.summary)\n"
                for option in processor.options {
                    let required = option.isRequired ? ", required" : ""
                    let fallback = option.defaultValue.map { ", default \($0.jsonText)" } ?? ""
                    text += "  \(option.name) (\(OptionDescription.type(of: option.shape))\(required)\(fallback)): \(option.help)\n"
                }
                if processor.acceptsUndeclaredOptions { text += "  … and the operation's own arguments (see `plugins --vips`)\n" }
                text += "\n"
            }
            return text
        }

        private func listVipsOperations() {
            print(
                """
                Operations for {"vips": {"operation": NAME, …arguments}}: each takes one image and gives one. \
                Loaders, savers, deprecated operations and any with a file, string or image-array argument are left out.

                """)
            for operation in VipsStep.permittedOperations {
                print("\(operation.name): \(operation.summary)")
                for argument in operation.inputs where argument.kind != .image && !argument.isDeprecated {
                    let required = argument.isRequired ? ", required" : ""
                    print("  \(argument.name) (\(VipsStep.describe(argument))\(required)): \(argument.help)")
                }
                print("")
            }
        }
    }
}

/// Short type names for option listings.
enum OptionDescription {
    static func type(of shape: ValueShape) -> String {
        switch shape {
        case .boolean: "boolean"
        case .integer(let range): "integer \(range.lowerBound)–\(range.upperBound)"
        case .number(let range): "number \(range.lowerBound)–\(range.upperBound)"
        case .string: "string"
        case .choice(let values): values.joined(separator: "|")
        case .duration: "duration"
        case .byteSize: "size"
        case .colour: "colour"
        case .pathTemplate: "path template"
        case .stringMap: "object of strings"
        case .array(let items, _): "array of \(type(of: items))"
        case .object: "object"
        case .anyOf(let shapes): shapes.map(type(of:)).joined(separator: " or ")
        case .tagged(let key, _): "object keyed by \(key)"
        case .singleKey: "step"
        }
    }
}
