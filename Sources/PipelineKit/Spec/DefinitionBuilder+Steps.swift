import Foundation

/// Building an output's processor steps, the resize each of its widths makes, and its encoders.
extension DefinitionBuilder {
    /// The encoders of an output: its `encode`, or each of its `formats`; nil when one cannot be built.
    mutating func buildEncoders(_ node: JSONNode, at path: String) -> [EncoderSettings]? {
        switch (node["encode"], node["formats"]) {
        case (nil, nil):
            problems.append(
                .init(
                    path: path, location: node.location,
                    message:
                        "missing required key \"encode\" (or \"formats\", a list of encodings shaped like encode, or \"tiles\" for a tile pyramid)"
                ))
            return nil
        case (_?, let formats?):
            problems.append(
                .init(
                    path: join(path, "formats"), location: formats.location,
                    message: "the output gives both encode and formats: give one (formats for several encodings)"))
            return nil
        case (let encode?, nil):
            return buildEncoder(encode, at: join(path, "encode")).map { [$0] }
        case (nil, let formats?):
            guard case .array(let items) = formats.value, isWellShaped(join(path, "formats")) else { return nil }
            let encoders = items.enumerated().compactMap { position, item in
                buildEncoder(item.expandingShorthand(to: "format"), at: "\(path).formats[\(position)]")
            }
            guard encoders.count == items.count, !encoders.isEmpty else { return nil }
            for (position, encoder) in encoders.enumerated() {
                if let first = encoders.firstIndex(where: { $0.format == encoder.format }), first < position {
                    problems.append(
                        .init(
                            path: "\(path).formats[\(position)]", location: items[position].location,
                            message: "\(encoder.format.rawValue) is listed twice (also formats[\(first)]): both would write the same files")
                    )
                }
            }
            return encoders
        }
    }

    /// The output's `widths`, nil standing for `"original"`; nil when it lists none.
    mutating func readWidths(_ node: JSONNode, at path: String) -> [Int?]? {
        guard case .array(let items)? = node["widths"]?.value, isWellShaped(join(path, "widths")) else { return nil }
        var widths: [Int?] = []
        for (position, item) in items.enumerated() {
            let width: Int? = if case .number(let number, true) = item.value { Int(exactly: number) } else { nil }
            if widths.contains(width) {
                problems.append(
                    .init(
                        path: "\(path).widths[\(position)]", location: item.location,
                        message: "\(item.jsonText) is listed twice"))
                continue
            }
            widths.append(width)
        }
        return widths
    }

    /// The options of a `resize` step node, or nil when the node is another step.
    func resizeOptions(_ node: JSONNode) -> [String: JSONNode]? {
        guard case .object(let members) = node.value, members.count == 1, let member = members.first, member.key == "resize",
            case .object(let optionMembers) = member.value.value
        else { return nil }
        return Dictionary(optionMembers.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// Warns of each resize `position` of the output at `path` that can place nothing: a resize
    /// to a width or a height alone keeps the aspect ratio, so it crops nothing and leaves no room
    /// in a box. An output's `widths` give its resize a width, and its `art` crops a height.
    mutating func warnOfPositionsThatPlaceNothing(_ node: JSONNode, at path: String, listsWidths: Bool, hasArt: Bool) {
        guard case .array(let stepNodes)? = node["steps"]?.value else { return }
        for (index, stepNode) in stepNodes.enumerated() {
            guard let options = resizeOptions(stepNode), options["position"] != nil else { continue }
            let hasWidth = options["width"] != nil || listsWidths
            let hasHeight = options["height"] != nil || hasArt
            guard hasWidth != hasHeight else { continue }
            warnings.append(
                "\(path).steps[\(index)].resize.position places nothing: the resize has a \(hasWidth ? "width" : "height") alone, "
                    + "so it keeps the aspect ratio and crops nothing; give both width and height\(listsWidths ? ", or art" : "")")
        }
    }

    /// An output with widths has one resize step, and its widths are the step's width: the step
    /// itself names none.
    mutating func checkResizeForWidths(
        _ options: [String: JSONNode], earlier: ResizeStep?,
        at path: String, node: JSONNode
    ) -> Bool {
        if earlier != nil {
            problems.append(
                .init(
                    path: path, location: node.location,
                    message: "an output with widths has one resize step (each of widths becomes its width), not several"))
            return false
        }
        for key in ["width", "height"] {
            if let value = options[key] {
                problems.append(
                    .init(
                        path: join(path, key), location: value.location,
                        message: "an output with widths gives its resize step no \(key): each of widths becomes its width"))
                return false
            }
        }
        return true
    }

    /// The resize one width of an output makes: its resize step's options (fit inside when the
    /// output has none) with that width, never enlarging unless the step says so.
    mutating func buildResize(width: Int, options: [String: JSONNode], at path: String, implied: Bool) -> (any ImageProcessing)? {
        guard let type = processors.processor(named: "resize") else {
            problems.append(.init(path: path, location: nil, message: "widths need the resize step, which this command does not have"))
            return nil
        }
        var values = options
        values["width"] = JSONNode(plain: width)
        if values["withoutEnlargement"] == nil { values["withoutEnlargement"] = JSONNode(plain: true) }
        if implied { values["fit"] = JSONNode(plain: "inside") }
        do {
            let step = try type.init(
                options: ProcessorOptions(
                    values: values, definitions: type.options, baseDirectory: baseDirectory, faceFinder: processors.faceFinder))
            return checkFocusPoints(step, at: implied ? path : join(path, "position"), location: options["position"]?.location)
        } catch {
            let problemPath = implied ? path : error.option.map { join(path, $0) } ?? path
            problems.append(.init(path: problemPath, location: error.option.flatMap { options[$0]?.location }, message: error.message))
            return nil
        }
    }

    /// The processor a step node names, built from its options; nil (with the problem) when
    /// its options break the processor's rules.
    mutating func buildStep(_ node: JSONNode, at path: String) -> (any ImageProcessing)? {
        guard case .object(let members) = node.value, let member = members.first,
            let type = processors.processor(named: member.key),
            case .object(let optionMembers) = member.value.value
        else { return nil }
        let values = Dictionary(optionMembers.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        do {
            let step = try type.init(
                options: ProcessorOptions(
                    values: values, definitions: type.options, baseDirectory: baseDirectory, faceFinder: processors.faceFinder))
            // The option that asks for the point (resize's position, crop's gravity) is the one set to "focus".
            let focusOption = values.keys.sorted().first { values[$0]?.value == .string("focus") }
            return checkFocusPoints(
                step, at: join(join(path, member.key), focusOption ?? "position"),
                location: focusOption.flatMap { values[$0]?.location } ?? member.value.location)
        } catch {
            let stepPath = join(path, member.key)
            let optionNode = error.option.flatMap { values[$0] }
            let problemPath = error.option.map { join(stepPath, $0) } ?? stepPath
            problems.append(
                .init(
                    path: problemPath, location: optionNode?.location ?? member.value.location, message: error.message,
                    fileAtFault: error.fileAtFault))
            return nil
        }
    }

    /// The encoder settings an `encode` object (or one of `formats`) describes.
    private mutating func buildEncoder(_ node: JSONNode, at path: String) -> EncoderSettings? {
        guard case .string(let formatName)? = node["format"]?.value,
            let format = EncoderSettings.Format(rawValue: formatName)
        else { return nil }
        // Keys the format does not know were reported by the shape check; the rest still builds.
        let known = Set(EncoderSettings.options(for: format).map(\.name))
        guard case .object(let members) = node.value else { return nil }
        let values = Dictionary(
            members.filter { known.contains($0.key) }.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        do {
            return try EncoderSettings(
                format: format,
                options: ProcessorOptions(
                    values: values, definitions: EncoderSettings.options(for: format),
                    baseDirectory: baseDirectory))
        } catch {
            // A mistyped value was reported by the shape check; what is left are rules across options.
            guard isWellShaped(path) else { return nil }
            problems.append(
                .init(
                    path: error.option.map { join(path, $0) } ?? path,
                    location: error.option.flatMap { values[$0]?.location } ?? node.location, message: error.message,
                    fileAtFault: error.fileAtFault))
            return nil
        }
    }
}
