import Testing

/// Polls `condition` every 10 ms until it holds, and fails the test as `#require` does, naming
/// `what`, when it still does not hold after `limit`.
///
/// The limit is generous because a loaded two-core machine running the whole suite, in a
/// sanitized build above all, can keep a test's tasks from being scheduled for minutes. A passing test stops polling as soon as the
/// condition holds, so the limit bounds only the failing case.
package func waitUntil(
    _ what: @autoclosure () -> String,
    within limit: Duration = .seconds(600),
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    let interval = Duration.milliseconds(10)
    let deadline = ContinuousClock.now + limit
    for _ in 0...Int(limit / interval) {
        if try await condition() { return }
        if ContinuousClock.now >= deadline { break }
        try await Task.sleep(for: interval)
    }
    let held = try await condition()
    try #require(held, "waited \(limit) and still not: \(what())", sourceLocation: sourceLocation)
}
