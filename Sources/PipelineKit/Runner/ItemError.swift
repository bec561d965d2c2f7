/// Why one input (or one output of it) failed, and in which stage.
public struct ItemError: Error, Sendable, Equatable, CustomStringConvertible {
    public let stage: Stage
    public let reason: String

    public init(stage: Stage, reason: String) {
        self.stage = stage
        self.reason = reason
    }

    public var description: String { "\(stage.rawValue): \(reason)" }
}
