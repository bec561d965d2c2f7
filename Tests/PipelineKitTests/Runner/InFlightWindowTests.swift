import Testing
import Vips
@testable import PipelineKit
import TestSupport

/// The backpressure window, by itself: bounded, complete, and starting nothing once cancelled.
struct InFlightWindowTests {
    @Test func neverMoreThanTheWidthAreInFlightAndEveryElementCompletes() async {
        let state = Locked((running: 0, peak: 0))
        var completed: [Int] = []

        let peak = await InFlightWindow(width: 3).run(Array(0..<20)) { element in
            state.withLock { $0.running += 1; $0.peak = max($0.peak, $0.running) }
            for _ in 0..<3 { await Task.yield() }
            state.withLock { $0.running -= 1 }
            return element
        } completed: { completed.append($0) }

        #expect(completed.sorted() == Array(0..<20))
        #expect(peak == 3, "the window fills to its width before the first completes")
        #expect(state.withLock { $0.peak } <= 3)
    }

    @Test func aWidthLargerThanTheElementsStartsThemAll() async {
        var completed = 0
        let peak = await InFlightWindow(width: 10).run([1, 2, 3]) { $0 } completed: { _ in completed += 1 }
        #expect(peak == 3 && completed == 3)
    }

    @Test func onceCancelledNoFurtherElementStarts() async {
        let started = Locked<[Int]>([])
        let run = Task {
            // Cancelled before it begins: the first window's worth start, and no more.
            withUnsafeCurrentTask { $0?.cancel() }
            return await InFlightWindow(width: 2).run(Array(0..<10)) { element in
                started.withLock { $0.append(element) }
                return element
            } completed: { _ in }
        }
        #expect(await run.value == 2)
        #expect(started.withLock { $0.sorted() } == [0, 1])
    }
}
