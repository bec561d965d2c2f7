import Foundation

/// The checks across outputs: names used twice, taken by the server's own paths or that cannot
/// be one part of a path, and path templates that would write the same files.
extension DefinitionBuilder {
    /// Duplicate names, and templates two outputs share without a placeholder that tells them
    /// apart. An output with a step that could not be built is left out of the second check: its
    /// sizes are not known. The widths and formats of one output are told apart by its own
    /// check (`{width}`, `{format}`), so they are compared only with other outputs.
    mutating func checkOutputsTogether(
        _ built: [(index: Int, outputs: [OutputDefinition], complete: Bool)], nodes: [JSONNode]
    ) {
        var firstByName: [String: Int] = [:]
        var sharers: [String: TemplateSharers] = [:]
        for (index, outputs, complete) in built {
            guard let name = outputs.first?.name else { continue }
            let path = "outputs[\(index)]"
            if ServeSettings.reservedNames.contains(name) {
                problems.append(
                    .init(
                        path: join(path, "name"), location: nodes[index]["name"]?.location,
                        message:
                            "output name \(name.quotedValue) is the first part of the server's own path /\(name) (pipeline serve): "
                            + "its URLs would be answered by that path; give the output another name"))
            }
            if name.contains("/") || name == "." || name == ".."
                || name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            {
                problems.append(
                    .init(
                        path: join(path, "name"), location: nodes[index]["name"]?.location,
                        message:
                            "output name \(name.quotedValue) cannot be one part of a path: the server takes an output's name as one "
                            + "part of its URLs (/NAME/INPUT), and {output} as one folder or file name; give the output a name "
                            + "without \"/\" or control characters, and other than \".\" and \"..\""))
            }
            if let first = firstByName[name] {
                problems.append(
                    .init(
                        path: join(path, "name"), location: nodes[index]["name"]?.location,
                        message: "output name \(name.quotedValue) is already used by outputs[\(first)]"))
            } else {
                firstByName[name] = index
            }
            // One template written twice makes the same paths unless a placeholder in it takes
            // different values for the two outputs whatever the input: {output}, {format}, or a
            // {width} or {height} both outputs' steps fix, to different sizes. Outputs are
            // grouped by what tells them apart, so each is looked up, not compared with all.
            guard complete else { continue }
            var reported = false
            for output in outputs {
                let placeholders = output.path.placeholders
                var group = output.path.text
                if placeholders.contains(.output) { group += "\u{0}" + output.name }
                if placeholders.contains(.format) { group += "\u{0}" + output.encoder.format.fileExtension }
                // Outputs made for different inputs may share a template: planning finds the inputs
                // they would both write for.
                if let subset = output.inputSubset { group += "\u{0}inputs\u{0}" + subset.patterns.joined(separator: "\u{0}") }
                let fixed =
                    output.variant.map { (width: $0.width, height: Int?.none) } ?? output.fixedSize()
                let size = TemplateSharers.Size(
                    width: placeholders.contains(.width) ? fixed.width : nil,
                    height: placeholders.contains(.height) ? fixed.height : nil)
                WorkCounter.add(.templatePairs)
                if !reported, let first = sharers[group]?.firstClash(with: size), first != index {
                    reported = true
                    let sizes =
                        placeholders.contains(.width) || placeholders.contains(.height)
                        ? " ({width} and {height} tell outputs apart only when both outputs' steps fix them, to different sizes)" : ""
                    problems.append(
                        .init(
                            path: join(path, "path"), location: nodes[index]["path"]?.location,
                            message:
                                "outputs[\(first)] has the same path template \(output.path.text.quotedValue): both would write the same files\(sizes)"
                        ))
                }
                sharers[group, default: TemplateSharers()].add(index, size: size)
            }
        }
    }
}
