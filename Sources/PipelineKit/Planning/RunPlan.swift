import Foundation

/// What a run will do, worked out before any work starts: every input found, and for each the
/// path of every output, checked for clashes and for escapes from the output folders.
public struct RunPlan: Sendable {
    /// One input and where its outputs go.
    public struct Item: Sendable {
        public let input: InputFile
        /// The output paths in the order of `definition.outputs`; `{width}` and `{height}`
        /// stay unfilled until the image is processed.
        public let targets: [OutputTarget]
    }

    public let definition: PipelineDefinition
    public let items: [Item]
    /// Things worth telling the user that do not stop the run (a glob matching nothing).
    public let warnings: [String]

    /// Finds the inputs and resolves every output path.
    ///
    /// - Throws: `PipelineFileError` when two outputs would write one path, an output would
    ///   overwrite an input, or a filled-in value would leave its output folder.
    public init(_ definition: PipelineDefinition, fileName: String) throws(PipelineFileError) {
        self.definition = definition
        let enumeration = InputEnumerator(baseDirectory: definition.baseDirectory).enumerate(definition.inputs)
        warnings = enumeration.warnings

        var problems: [PipelineFileError.Problem] = []
        var writers: [String: (input: String, output: String)] = [:]
        let inputPaths = Set(enumeration.files.map(\.path))
        var items: [Item] = []
        for input in enumeration.files {
            var targets: [OutputTarget] = []
            for (index, output) in definition.outputs.enumerated() {
                let place = "outputs[\(index)].path"
                do {
                    let target = try OutputTarget(output: output, input: input, baseDirectory: definition.baseDirectory)
                    targets.append(target)
                    // Paths still holding {width}/{height} are compared as written; the runner
                    // catches the rest when the sizes are known.
                    if let earlier = writers[target.plannedPath] {
                        problems.append(.init(path: place, location: output.pathLocation, message:
                            "output \"\(output.name)\" of \(input.displayName) and output \"\(earlier.output)\" of \(earlier.input) would both write \(target.plannedPath)"))
                    } else {
                        writers[target.plannedPath] = (input.displayName, output.name)
                    }
                    if inputPaths.contains(target.plannedPath) {
                        problems.append(.init(path: place, location: output.pathLocation, message:
                            "output \"\(output.name)\" of \(input.displayName) would overwrite the input \(target.plannedPath)"))
                    }
                } catch {
                    problems.append(.init(path: place, location: output.pathLocation, message: "input \(input.displayName): \(error.message)"))
                }
            }
            items.append(Item(input: input, targets: targets))
        }
        guard problems.isEmpty else { throw PipelineFileError(file: fileName, problems: problems) }
        self.items = items
    }
}

/// Where one output of one input goes.
public struct OutputTarget: Sendable {
    public let outputName: String
    /// The folder the author wrote in the template, absolute: the path may not leave it.
    public let root: String
    /// The absolute path, with `{width}` and `{height}` left as written when the template has them.
    public let plannedPath: String
    let template: PathTemplate
    let values: [PathTemplate.Placeholder: String]
    let baseDirectory: URL

    init(output: OutputDefinition, input: InputFile, baseDirectory: URL) throws(PathTemplate.Failure) {
        outputName = output.name
        template = output.path
        self.baseDirectory = baseDirectory
        values = [
            .stem: input.stem, .ext: input.fileExtension, .name: input.fileName, .dir: input.subfolder,
            .output: output.name, .format: output.encoder.format.fileExtension,
            .width: "{width}", .height: "{height}",
        ]
        root = Self.absolute(output.path.authoredFolder, base: baseDirectory)
        plannedPath = try Self.place(template.resolve(values), root: root, base: baseDirectory)
    }

    /// The final path once the encoded image's size is known.
    func path(width: Int, height: Int) throws(PathTemplate.Failure) -> String {
        guard template.placeholders.contains(.width) || template.placeholders.contains(.height) else { return plannedPath }
        var filled = values
        filled[.width] = String(width)
        filled[.height] = String(height)
        return try Self.place(template.resolve(filled), root: root, base: baseDirectory)
    }

    private static func place(_ resolved: String, root: String, base: URL) throws(PathTemplate.Failure) -> String {
        let path = absolute(resolved, base: base)
        let prefix = root == "/" ? "/" : root + "/"
        guard path.hasPrefix(prefix), path.count > prefix.count else {
            throw PathTemplate.Failure(message: "the path \(path) would leave the output folder \(root)")
        }
        return path
    }

    private static func absolute(_ path: String, base: URL) -> String {
        if path.hasPrefix("/") { return InputEnumerator.normalize(path) }
        return InputEnumerator.normalize(base.path + "/" + path)
    }
}
