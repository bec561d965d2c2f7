/// One operation of a stage, as it happened: when it was queued, when it ran, on which lane.
public struct StageOperation: Sendable, Codable, Equatable {
    /// The stage that ran it.
    public let stage: Stage
    /// The input it worked for (its display name).
    public let input: String
    /// The output it worked for, for the process and encode stages.
    public let output: String?
    /// Seconds since the run started.
    public let queuedAt: Double
    /// Seconds since the run started, when a lane took it.
    public let startedAt: Double
    /// Seconds since the run started, when it ended.
    public let endedAt: Double
    /// Which of the queue's `concurrency` lanes ran it, from 0: one track each in a trace.
    public let lane: Int
    /// Whether it did its work without an error.
    public let succeeded: Bool
    /// What the work said of itself for the trace (a step's fallback), nil when nothing.
    public internal(set) var notes: [String]? = nil

    /// Seconds spent waiting for a free lane.
    public var waited: Double { startedAt - queuedAt }
    /// Seconds spent working.
    public var duration: Double { endedAt - startedAt }
}

/// How many operations of a stage are waiting, running and done, at one moment.
public struct StageCounts: Sendable, Equatable, Codable {
    /// Operations waiting for a free lane.
    public var queued = 0
    /// Operations on a lane.
    public var running = 0
    /// Operations finished.
    public var done = 0

    /// Counts of operations waiting, running and done.
    public init(queued: Int = 0, running: Int = 0, done: Int = 0) {
        self.queued = queued
        self.running = running
        self.done = done
    }
}
