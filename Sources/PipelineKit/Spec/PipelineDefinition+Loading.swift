import Foundation

extension PipelineDefinition {
    /// Reads and checks a pipeline file. Relative paths in it resolve against its folder, by the
    /// folder's real path.
    ///
    /// - Throws: `PipelineFileError` listing every problem, each with its JSON path, line and column.
    public init(contentsOf url: URL, processors: ProcessorRegistry, displayName: String? = nil) throws(PipelineFileError) {
        let fileName = displayName ?? url.path
        // Opened without blocking and checked by its descriptor: a FIFO, a device or a folder is
        // named as what it is rather than read (a FIFO would block, /dev/zero never ends).
        let data: Data
        do throws(RegularFile.Failure) {
            let file = try RegularFile(opening: url.path)
            guard let read = file.readAll() else {
                throw RegularFile.Failure(reason: String(cString: strerror(errno)), code: errno)
            }
            data = read
        } catch {
            let reason = error.code == EMFILE || error.code == ENFILE ? OpenFileLimit.reason : error.reason
            throw PipelineFileError(
                file: fileName,
                problems: [
                    .init(path: "", location: nil, message: "cannot read the pipeline file: \(reason)")
                ])
        }
        let text = try Self.utf8Text(data, fileName: fileName)
        try self.init(json: text, baseDirectory: Self.realFolder(of: url), processors: processors, fileName: fileName)
        sourceFile = url.standardizedFileURL
    }

    /// The folder `file` is in, by its real path. A pipeline file reached through a symbolic link
    /// to its folder (`/data` → `/mnt/nfs/data`) is the same pipeline as by its real path: one
    /// journal, and the same output paths, whichever way it is run. The working folder is
    /// already real (`getcwd`), so a relative name and an absolute one through the link agree.
    static func realFolder(of file: URL) -> URL {
        let folder = file.deletingLastPathComponent()
        return WriteCheck.realPath(folder.path).map { URL(fileURLWithPath: $0, isDirectory: true) } ?? folder
    }

    /// The file's bytes as text; when they are not UTF-8, an error naming the first bad byte by
    /// its offset, line and column (counted as the JSON parser counts them: characters).
    static func utf8Text(_ data: Data, fileName: String) throws(PipelineFileError) -> String {
        var parser = Unicode.UTF8.ForwardParser()
        var bytes = data.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &bytes) {
            case .valid(let scalar):
                offset += scalar.count
                continue
            case .emptyInput:
                return String(decoding: data, as: UTF8.self)
            case .error:
                let before = data.prefix(offset)
                let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? before.startIndex
                let line = before.count { $0 == UInt8(ascii: "\n") } + 1
                let column = String(decoding: before[lineStart...], as: UTF8.self).count + 1
                let byte = String(format: "0x%02X", data[data.startIndex + offset])
                throw PipelineFileError(
                    file: fileName,
                    problems: [
                        .init(
                            path: "", location: SourceLocation(line: line, column: column),
                            message:
                                "the file is not UTF-8 text: the byte \(byte) at offset \(offset) (line \(line), column \(column)) does not begin a valid UTF-8 character"
                        )
                    ])
            }
        }
    }

    /// Checks a pipeline held in a string; relative paths resolve against `baseDirectory`, and
    /// a `"${NAME}"` value (a header's, `serve.key`, `serve.salt`) reads `environment`.
    public init(
        json text: String, baseDirectory: URL, processors: ProcessorRegistry, fileName: String = "<string>",
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(PipelineFileError) {
        if !processors.problems.isEmpty {
            throw PipelineFileError(file: fileName, problems: processors.problems.map { .init(path: "", location: nil, message: $0) })
        }
        let root: JSONNode
        let duplicates: [JSONParser.Duplicate]
        do {
            (root, duplicates) = try JSONParser.parseNotingDuplicates(text)
        } catch {
            throw PipelineFileError(
                file: fileName,
                problems: [
                    .init(path: "", location: error.location, message: "invalid JSON: \(error.message)")
                ])
        }
        // Which of two values is meant cannot be known: each key given again is said, at once.
        guard duplicates.isEmpty else {
            throw PipelineFileError(
                file: fileName,
                problems: duplicates.map { duplicate in
                    .init(
                        path: duplicate.objectPath, location: duplicate.again,
                        message: "the key \(duplicate.key.quotedValue) is given again (first at line \(duplicate.first.line), "
                            + "column \(duplicate.first.column)): an object takes a key once; keep the one meant")
                })
        }
        var validator = ShapeValidator()
        validator.check(root, against: PipelineFormat.shape(processors: processors), at: "")
        // The later checks run on every part whose shape is right, so one pass lists them all.
        var builder = DefinitionBuilder(
            processors: processors, baseDirectory: baseDirectory.standardizedFileURL,
            shapeProblems: validator.problems, environment: environment)
        builder.warnings += validator.notes
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
