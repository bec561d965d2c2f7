/// Why one input (or one output of it) failed, and in which stage (and step, when a processor
/// step failed).
public struct ItemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One step of an output's chain, as the pipeline file lists it.
    public struct Step: Sendable, Hashable, Codable, CustomStringConvertible {
        /// Its index in the output's `steps`, from 0.
        public let index: Int
        /// The processor's name, for example `crop`.
        public let name: String

        public init(index: Int, name: String) {
            self.index = index
            self.name = name
        }

        /// As a JSON path within the output, the way pipeline-file errors name it: `steps[1].crop`.
        public var description: String { "steps[\(index)].\(name)" }
    }

    public let stage: Stage
    public let reason: String
    /// The processor step that failed, or nil when the failure is not a step's.
    public let step: Step?

    public init(stage: Stage, reason: String, step: Step? = nil) {
        self.stage = stage
        self.reason = reason
        self.step = step
    }

    public var description: String {
        "\(stage.rawValue): \(step.map { "\($0): " } ?? "")\(reason)"
    }
}
