/// Backpressure: at most `width` elements between the first stage and the last. A new one
/// starts only when one finishes, so memory does not grow with the number of inputs, and a
/// fast fetch stage waits for a slow encoder.
struct InFlightWindow: Sendable {
    let width: Int

    /// Runs `work` for each of `elements` in order, at most `width` at once, and hands each
    /// result to `completed` on the calling task as it arrives. Once the calling task is
    /// cancelled, no further element starts. Returns the most that were in flight at once.
    func run<Element: Sendable, Result: Sendable>(
        _ elements: [Element],
        work: @escaping @Sendable (Element) async -> Result,
        completed: (Result) -> Void
    ) async -> Int {
        await withTaskGroup(of: Result.self) { group in
            var next = 0, inFlight = 0, peak = 0
            func startNext() {
                guard next < elements.count else { return }
                let element = elements[next]
                next += 1
                inFlight += 1
                peak = max(peak, inFlight)
                group.addTask { await work(element) }
            }
            for _ in 0..<max(1, width) { startNext() }
            while let result = await group.next() {
                inFlight -= 1
                completed(result)
                if !Task.isCancelled { startNext() }
            }
            return peak
        }
    }
}
