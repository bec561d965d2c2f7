/// A pipeline file that cannot be run, with every problem found in it.
public struct PipelineFileError: Error, Sendable, CustomStringConvertible {
    /// One thing wrong, at one place in the file.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// Where in the JSON document, for example `outputs[0].encode.quality`.
        public let path: String
        /// Line and column in the file, when the problem is at a value of the file.
        public let location: SourceLocation?
        /// What is wrong, for people.
        public let message: String
        /// The file beside the pipeline file that the problem is about (an overlay, a profile,
        /// the focus file, the fallback image), when it is one: a change to it may mend the
        /// problem, so `watch` and `serve` watch it while the pipeline file fails.
        public var fileAtFault: String?
        /// Whether the machine is at fault, not the file: the folder for temporary files cannot
        /// hold the plan. A command whose problems are all such fails (exit status 1), rather
        /// than calling the file invalid (2).
        public var isTheMachines = false

        /// A problem at the JSON `path`, at `location` when known, about `fileAtFault` when it is about a file.
        public init(path: String, location: SourceLocation?, message: String, fileAtFault: String? = nil) {
            self.path = path
            self.location = location
            self.message = message
            self.fileAtFault = fileAtFault
        }

        /// The problem at its JSON path, `path: message`, without the line and column
        /// (`location`), which the whole error's `description` puts before it with the file.
        public var description: String {
            let place = path.isEmpty ? "" : "\(path): "
            return "\(place)\(message)"
        }
    }

    /// The file's path as the user gave it, or `<string>` for JSON handed over in memory.
    public let file: String
    /// Every problem found, in file order.
    public let problems: [Problem]
    /// Whether the file is not at fault: a run of another pipeline file is writing the same
    /// outputs now, and a run started once it has finished will go.
    public var isWaitingForAnotherRun = false

    /// The problems of the pipeline file named `file`.
    public init(file: String, problems: [Problem]) {
        self.file = file
        self.problems = problems
    }

    /// One line per problem, `file:line:column: path: message`, as compilers print them.
    public var description: String {
        problems.map { problem in
            let position = problem.location.map { ":\($0.line):\($0.column)" } ?? ""
            return "\(file)\(position): error: \(problem)"
        }.joined(separator: "\n")
    }
}
