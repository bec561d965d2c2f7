/// The `limits` section: bounds on one input's work, whatever stage it is in.
public struct LimitsSettings: Sendable, Equatable {
    /// Seconds one input may take from the start of its decode to the commit of its last
    /// output (`limits.itemTimeout`), waits for a lane between its stages included; past it
    /// the input fails and the run goes on. 0 for no limit.
    public var itemTimeout: Double

    /// Five minutes: far more than any image a pipeline is made for takes, so only a hostile or
    /// broken input reaches it.
    public static let defaultItemTimeout: Double = 300

    /// Limits with the given values; the defaults are the pipeline file's.
    public init(itemTimeout: Double = LimitsSettings.defaultItemTimeout) {
        self.itemTimeout = itemTimeout
    }
}
