/// The key every stage section has: the width of its queue.
extension StageSettings {
    /// `concurrency` of the stage named `stage`: `value` by default, or, when the default follows
    /// the machine, `defaultRule` of the cores this process may use.
    static func concurrencyOption(_ stage: String, _ value: Int, _ defaultRule: String?) -> Option {
        Option(
            "concurrency", .integer(1...64), default: JSONNode(plain: value),
            defaultRule: defaultRule.map { "\($0) this process may use" },
            help: "operations the \(stage) queue runs at once" + (defaultRule.map { " (default: \($0) this process may use)" } ?? ""))
    }
}
