import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// The backpressure window, by itself: bounded, complete, and starting nothing once cancelled.
struct InFlightWindowTests {
    @Test func neverMoreThanTheWidthAreInFlightAndEveryElementCompletes() async {
        let state = Locked((running: 0, peak: 0))
        var completed: [Int] = []

        let peak = await InFlightWindow(width: 3).run(Array(0..<20)) { element, _ in
            state.withLock {
                $0.running += 1; $0.peak = max($0.peak, $0.running)
            }
            for _ in 0..<3 { await Task.yield() }
            state.withLock { $0.running -= 1 }
            return element
        } completed: {
            completed.append($0)
        }

        #expect(completed.sorted() == Array(0..<20))
        #expect(peak == 3, "the window fills to its width before the first completes")
        #expect(state.withLock { $0.peak } <= 3)
    }

    @Test func aWidthLargerThanTheElementsStartsThemAll() async {
        var completed = 0
        let peak = await InFlightWindow(width: 10).run([1, 2, 3]) { element, _ in
            element
        } completed: { _ in
            completed += 1
        }
        #expect(peak == 3 && completed == 3)
    }

    @Test func onceCancelledNoFurtherElementStarts() async {
        let started = Locked<[Int]>([])
        let run = Task {
            // Cancelled before it begins: the first window's worth start, and no more.
            withUnsafeCurrentTask { $0?.cancel() }
            return await InFlightWindow(width: 2).run(Array(0..<10)) { element, _ in
                started.withLock { $0.append(element) }
                return element
            } completed: { _ in
            }
        }
        #expect(await run.value == 2)
        #expect(started.withLock { $0.sorted() } == [0, 1])
    }

    @Test func anElementSteppingAsideLetsAnotherStartAndEveryResultStillArrives() async throws {
        let gate = Locked<CheckedContinuation<Void, Never>?>(nil)
        let state = Locked((working: 0, peak: 0, started: [Int]()))
        var completed: [Int] = []
        let announced = Locked(0)

        // Width 1: element 0 waits aside until element 2 has finished, so 1 and 2 must start
        // while it waits; without stepping aside the run could never finish.
        let window = InFlightWindow(width: 1, asideLimit: 4)
        let announce: @Sendable () -> Void = { announced.withLock { $0 += 1 } }
        let peak = await window.run(Array(0..<3), allStarted: announce) { element, slot in
            state.withLock { $0.started.append(element) }
            if element == 0 {
                await slot.stepAside {
                    await withCheckedContinuation { continuation in gate.withLock { $0 = continuation } }
                }
            } else {
                state.withLock {
                    $0.working += 1; $0.peak = max($0.peak, $0.working)
                }
                for _ in 0..<3 { await Task.yield() }
                state.withLock { $0.working -= 1 }
                if element == 2 {
                    // Element 0 has handed its continuation over before it stepped aside.
                    while gate.withLock({ $0 == nil }) { await Task.yield() }
                    gate.withLock {
                        $0?.resume(); $0 = nil
                    }
                }
            }
            return element
        } completed: {
            completed.append($0)
        }

        #expect(completed.count == 3 && Set(completed) == [0, 1, 2])
        #expect(state.withLock { $0.started } == [0, 1, 2])
        #expect(state.withLock { $0.peak } == 1 && peak == 1, "those working never exceed the width")
        #expect(announced.withLock { $0 } == 1, "allStarted runs once")
    }

    @Test func withoutRoomAsideAnElementSteppingAsideStartsNothing() async {
        let started = Locked<[Int]>([])
        let peak = await InFlightWindow(width: 1, asideLimit: 0).run(Array(0..<3)) { element, slot in
            started.withLock { $0.append(element) }
            if element == 0 {
                // Nothing else may start while it waits, so it sees only itself started.
                let seen = await slot.stepAside { () async -> [Int] in
                    for _ in 0..<20 { await Task.yield() }
                    return started.withLock { $0 }
                }
                #expect(seen == [0])
            }
            return element
        } completed: { _ in
        }
        #expect(peak == 1 && started.withLock { $0 } == [0, 1, 2])
    }

    /// Elements whose waits aside end together come back one free place at a time: what they
    /// hold after the wait (a decoded image) never counts more than the width, however many
    /// stepped aside.
    @Test func elementsComingBackFromAsideWaitForAFreePlace() async {
        let count = 8
        let state = Locked((aside: 0, past: 0, peakPast: 0))
        var completed: [Int] = []
        let peak = await InFlightWindow(width: 2, asideLimit: count).run(Array(0..<count)) { element, slot in
            await slot.stepAside {
                state.withLock { $0.aside += 1 }
                // Every element waits aside until all of them are: their waits end together.
                for _ in 0..<100_000 where state.withLock({ $0.aside }) < count { await Task.yield() }
            }
            state.withLock {
                $0.past += 1; $0.peakPast = max($0.peakPast, $0.past)
            }
            for _ in 0..<5 { await Task.yield() }
            state.withLock { $0.past -= 1 }
            return element
        } completed: {
            completed.append($0)
        }
        #expect(completed.sorted() == Array(0..<count))
        #expect(state.withLock { $0.aside } == count, "all of them stepped aside at once")
        #expect(state.withLock { $0.peakPast } <= 2, "no more than the width past the wait at once")
        #expect(peak <= 2)
    }
}
