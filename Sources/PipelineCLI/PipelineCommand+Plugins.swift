import ArgumentParser
import PipelineKit

extension PipelineCommand {
    struct Plugins: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the processors a pipeline's steps may use, with their options."
        )

        func run() {
            for processor in PipelineCommand.processors.processors {
                print("\(processor.name): \(processor.summary)")
                for option in processor.options {
                    let required = option.isRequired ? ", required" : ""
                    let fallback = option.defaultValue.map { ", default \($0.jsonText)" } ?? ""
                    print("  \(option.name) (\(OptionDescription.type(of: option.shape))\(required)\(fallback)): \(option.help)")
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
