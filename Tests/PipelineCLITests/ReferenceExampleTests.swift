import Foundation
import PipelineKit
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineCLI

/// Every example docs/pipeline-file.md gives is a value the validator takes: put in its place in
/// a file that is valid without it (with the keys it depends on, and the files it names), it
/// draws no problem at its own key or below.
@Suite struct ReferenceExampleTests {
    /// A valid file, and the output the sections under `outputs[]` change.
    static var base: [String: Any] {
        [
            "version": 1, "inputs": ["in/*.jpg"],
            "outputs": [["name": "o", "encode": ["format": "jpeg"], "path": "out/{stem}.jpg"]],
        ]
    }

    /// The file with `key` set to `example` (JSON text) in the object `section` names.
    func file(section: Reference.Section, key: String, example: String) throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(example.utf8), options: .fragmentsAllowed)
        var root = Self.base
        var output = (root["outputs"] as! [[String: Any]])[0]
        switch section.path {
        case "":
            root[key] = value
        case "inputs[]":
            root["inputs"] = [[key: value]]
        case "outputs[]":
            output[key] = value
            if key == "formats" || key == "tiles" { output["encode"] = nil }
            if key == "art" {
                output["widths"] = [200]
                output["path"] = "out/{stem}-{art}-{width}.jpg"
            }
        case "outputs[].encode":
            var encode = output["encode"] as! [String: Any]
            if let variant = section.variant, let format = variant.split(separator: "\"").dropFirst(2).first {
                encode["format"] = String(format)
            }
            encode[key] = value
            // A TIFF's tile options are for a tiled file, its quality for a lossy compression.
            if encode["format"] as? String == "tiff", key != "tile" { encode["tile"] = true }
            if encode["format"] as? String == "tiff", key == "quality" { encode["compression"] = "jpeg" }
            output["encode"] = encode
            output["path"] = "out/{stem}.{format}"
        case "outputs[].art[]":
            var art: [String: Any] = ["media": "(max-width: 640px)", "aspectRatio": "1:1", "widths": [100]]
            art[key] = value
            output["art"] = [art]
            output["widths"] = [200]
            output["path"] = "out/{stem}-{art}-{width}.jpg"
        case "outputs[].placeholderOptions":
            output["placeholders"] = ["lqip"]
            output["placeholderOptions"] = [key: value]
        case "outputs[].tiles":
            output["encode"] = nil
            output["path"] = "out/{stem}"
            // The id is for the IIIF layouts, an overlap for DeepZoom's.
            output["tiles"] = key == "layout" ? [key: value] : [key: value, "layout": key == "overlap" ? "dz" : "iiif"]
            if key == "overlap" { output["path"] = "out/{stem}.dzi" }
        default:
            var object = root[section.path] as? [String: Any] ?? [:]
            object[key] = value
            root[section.path] = object
        }
        if section.path.hasPrefix("outputs[]") { root["outputs"] = [output] }
        return root
    }

    /// Where `key` of `section` is in the file `file(section:key:example:)` makes.
    func jsonPath(section: Reference.Section, key: String) -> String {
        let path = section.path.replacingOccurrences(of: "[]", with: "[0]")
        return path.isEmpty ? key : path + "." + key
    }

    @Test func everyExampleIsAValueTheValidatorTakes() throws {
        let directory = try TemporaryDirectory()
        try directory.write(Data("{}".utf8), to: "focus.json")
        try directory.write(try Fixtures.png(try Fixtures.solid(width: 4, height: 4, colour: Fixtures.grey)), to: "fallback.png")
        var checked = 0
        for section in Reference.sections(processors: .standard) {
            for option in section.options where !(section.variant != nil && option.name == "format") {
                let example = Reference.example(option)
                let root = try file(section: section, key: option.name, example: example)
                let json = String(decoding: try JSONSerialization.data(withJSONObject: root), as: UTF8.self)
                let at = jsonPath(section: section, key: option.name)
                var problems: [PipelineFileError.Problem] = []
                do {
                    _ = try PipelineDefinition(json: json, baseDirectory: directory.url, processors: .standard)
                } catch {
                    problems = error.problems
                }
                let own = problems.filter { $0.path == at || $0.path.hasPrefix(at + ".") || $0.path.hasPrefix(at + "[") }
                #expect(own.isEmpty, "\(at): the example \(example) is refused: \(own.map(\.message))")
                checked += 1
            }
        }
        #expect(checked > 150, "\(checked)")
    }
}
