import Foundation

extension PipelineDefinition {
    /// Reads and checks a pipeline file. Relative paths in it resolve against its folder.
    ///
    /// - Throws: `PipelineFileError` listing every problem, each with its JSON path, line and column.
    public init(contentsOf url: URL, processors: ProcessorRegistry, displayName: String? = nil) throws(PipelineFileError) {
        let fileName = displayName ?? url.path
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? "it does not exist or is not readable UTF-8 text"
            throw PipelineFileError(file: fileName, problems: [
                .init(path: "", location: nil, message: "cannot read the pipeline file: \(reason)"),
            ])
        }
        try self.init(json: text, baseDirectory: url.deletingLastPathComponent(), processors: processors, fileName: fileName)
    }

    /// Checks a pipeline held in a string; relative paths resolve against `baseDirectory`.
    public init(
        json text: String, baseDirectory: URL, processors: ProcessorRegistry, fileName: String = "<string>"
    ) throws(PipelineFileError) {
        if !processors.conflicts.isEmpty {
            throw PipelineFileError(file: fileName, problems: processors.conflicts.map {
                .init(path: "", location: nil, message: $0.description)
            })
        }
        let root: JSONNode
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw PipelineFileError(file: fileName, problems: [
                .init(path: "", location: error.location, message: "invalid JSON: \(error.message)"),
            ])
        }
        var validator = ShapeValidator()
        validator.check(root, against: PipelineFormat.shape(processors: processors), at: "")
        // The later checks run on every part whose shape is right, so one pass lists them all.
        var builder = DefinitionBuilder(processors: processors, baseDirectory: baseDirectory.standardizedFileURL,
                                        shapeProblems: validator.problems)
        let definition = builder.build(root)
        let problems = validator.problems + builder.problems
        guard let definition, problems.isEmpty else {
            throw PipelineFileError(file: fileName, problems: Self.inFileOrder(problems))
        }
        self = definition
    }

    /// Problems by line and column, those without a place first, and otherwise as found.
    private static func inFileOrder(_ problems: [PipelineFileError.Problem]) -> [PipelineFileError.Problem] {
        problems.enumerated().sorted { first, second in
            let a = first.element.location.map { ($0.line, $0.column) } ?? (0, 0)
            let b = second.element.location.map { ($0.line, $0.column) } ?? (0, 0)
            return a != b ? a < b : first.offset < second.offset
        }.map(\.element)
    }
}
