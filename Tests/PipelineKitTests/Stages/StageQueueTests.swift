import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// A stage's queue, by itself: bounded, counted, timed, and skipping work cancelled while queued.
struct StageQueueTests {
    /// Work that blocks its lane until the test lets it go, and says when it has started.
    private final class Gate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        let started: AsyncStream<Int>
        private let continuation: AsyncStream<Int>.Continuation
        private let state = Locked((running: 0, peak: 0, besides: [Int: Int]()))

        init() {
            (started, continuation) = AsyncStream.makeStream(of: Int.self)
        }

        var peak: Int { state.withLock { $0.peak } }

        /// How many others were running when `id` started.
        func besides(_ id: Int) -> Int? { state.withLock { $0.besides[id] } }

        func work(_ id: Int) -> Int {
            state.withLock {
                $0.besides[id] = $0.running
                $0.running += 1; $0.peak = max($0.peak, $0.running)
            }
            continuation.yield(id)
            semaphore.wait()
            state.withLock { $0.running -= 1 }
            return id
        }

        func open(_ count: Int) {
            for _ in 0..<count { semaphore.signal() }
        }
    }

    @Test func workRunsOnTheQueueAndIsRecordedAsAnOperation() async throws {
        let operations = Locked<[StageOperation]>([])
        let queue = StageQueue(stage: .decompress, concurrency: 2, clock: RunClock()) { op in operations.withLock { $0.append(op) } }

        let result = try await queue.run(for: "a.jpg", output: "small") { 42 }

        #expect(result == 42)
        #expect(queue.counts == StageCounts(queued: 0, running: 0, done: 1))
        let operation = try #require(operations.withLock { $0.first })
        #expect(operation.stage == .decompress && operation.input == "a.jpg" && operation.output == "small")
        #expect(operation.succeeded && operation.lane == 0 && operation.startedAt >= operation.queuedAt)
    }

    @Test func noMoreThanTheConcurrencyRunAtOnceEachOnItsOwnLane() async throws {
        let gate = Gate()
        let lanes = Locked<Set<Int>>([])
        let queue = StageQueue(stage: .encode, concurrency: 2, clock: RunClock()) { op in lanes.withLock { _ = $0.insert(op.lane) } }

        try await withThrowingTaskGroup(of: Int.self) { group in
            for id in 0..<4 {
                group.addTask { try await queue.run(for: "\(id)") { gate.work(id) } }
            }
            // Given two operations running and holding their lanes
            var started = gate.started.makeAsyncIterator()
            _ = await started.next()
            _ = await started.next()
            #expect(queue.counts.running == 2)
            // When they are let go, the other two follow
            gate.open(4)
            var finished: [Int] = []
            for try await id in group { finished.append(id) }
            #expect(finished.sorted() == [0, 1, 2, 3])
        }
        // Then never more than two ran at once, on lanes 0 and 1
        #expect(gate.peak == 2)
        #expect(lanes.withLock { $0 } == [0, 1])
        #expect(queue.counts == StageCounts(queued: 0, running: 0, done: 4))
    }

    @Test func exclusiveWorkWaitsForEveryLaneAndRunsAlone() async throws {
        let gate = Gate()
        let queue = StageQueue(stage: .decompress, concurrency: 2, clock: RunClock()) { _ in }
        try await withThrowingTaskGroup(of: Int.self) { group in
            var started = gate.started.makeAsyncIterator()
            // Given one operation holding a lane
            group.addTask { try await queue.run(for: "first") { gate.work(1) } }
            #expect(await started.next() == 1)
            // When exclusive work is asked for, and then ordinary work
            group.addTask { try await queue.run(for: "alone", exclusive: true) { gate.work(2) } }
            try await waitUntil("the exclusive work is queued") { queue.counts.queued == 1 }
            group.addTask { try await queue.run(for: "after") { gate.work(3) } }
            try await waitUntil("the ordinary work is queued behind it") { queue.counts.queued == 2 }
            // Then neither starts on the free lane: the exclusive work waits for both lanes, the other behind it
            #expect(queue.counts == StageCounts(queued: 2, running: 1, done: 0))
            gate.open(1)
            #expect(await started.next() == 2)
            #expect(queue.counts == StageCounts(queued: 1, running: 1, done: 1))
            gate.open(1)
            #expect(await started.next() == 3)
            gate.open(1)
            var finished: [Int] = []
            for try await id in group { finished.append(id) }
            #expect(finished.sorted() == [1, 2, 3])
        }
        #expect(gate.besides(2) == 0)
        #expect(queue.counts == StageCounts(queued: 0, running: 0, done: 3))
    }

    @Test func workCancelledWhileQueuedIsSkipped() async throws {
        let gate = Gate()
        let queue = StageQueue(stage: .fetch, concurrency: 1, clock: RunClock()) { _ in }
        let ran = Locked(false)

        // Given the only lane busy
        let first = Task { try await queue.run(for: "first") { gate.work(1) } }
        var started = gate.started.makeAsyncIterator()
        _ = await started.next()
        // And a second operation waiting for it
        let second = Task { try await queue.run(for: "second") { ran.withLock { $0 = true } } }
        try await waitUntil("the second operation is queued") { queue.counts.queued > 0 }

        // When the second is cancelled, then the first finishes
        second.cancel()
        gate.open(1)

        // Then the second never ran and says it was cancelled
        #expect(try await first.value == 1)
        await #expect(throws: CancellationError.self) { try await second.value }
        #expect(!ran.withLock { $0 })
    }

    /// Cancelled work leaves the queue at once, rather than when a lane comes free to skip it:
    /// its caller is not held up by the work ahead of it.
    @Test(arguments: [StageQueue.Threads.sharedPerCore, .ownPerLane])
    func workCancelledWhileQueuedLeavesTheQueueAtOnce(threads: StageQueue.Threads) async throws {
        let gate = Gate()
        let queue = StageQueue(stage: .cache, concurrency: 1, threads: threads, clock: RunClock()) { _ in }

        // Given the only lane busy and a second operation waiting for it
        let first = Task { try await queue.run(for: "first") { gate.work(1) } }
        var started = gate.started.makeAsyncIterator()
        _ = await started.next()
        let second = Task { try await queue.run(for: "second") { 2 } }
        try await waitUntil("the second operation is queued") { queue.counts.queued > 0 }
        #expect(queue.counts == StageCounts(queued: 1, running: 1, done: 0))

        // When the second is cancelled (its handler runs before `cancel` returns)
        second.cancel()

        // Then it is counted done at once, while the first still holds the lane, and never runs
        #expect(queue.counts == StageCounts(queued: 0, running: 1, done: 1))
        gate.open(1)
        await #expect(throws: CancellationError.self) { try await second.value }
        #expect(try await first.value == 1)
        #expect(queue.counts == StageCounts(queued: 0, running: 0, done: 2))
    }

    /// A stage that waits (fetch, cache) gets a thread per lane at once, however many cores
    /// there are: blocking work (a download, a wait) on eight lanes runs eight at once. On
    /// libdispatch's shared pool (one `OperationQueue` of width eight, as fetch ran before) two
    /// ran at once on two cores, a third after a second, and so on, so each of these would have
    /// timed out waiting for the others.
    @Test func everyLaneRunsAtOnceEvenWhenTheWorkBlocks() async throws {
        let lanes = 8
        let queue = StageQueue(stage: .fetch, concurrency: lanes, threads: .ownPerLane, clock: RunClock()) { _ in }
        let arrived = Locked(0)
        let allArrived = DispatchSemaphore(value: 0)
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for id in 0..<lanes {
                group.addTask {
                    try await queue.run(for: "\(id)") {
                        // A barrier: each waits, blocking its thread, until all have arrived.
                        let last = arrived.withLock { count in
                            count += 1; return count == lanes
                        }
                        if last { for _ in 0..<lanes { allArrived.signal() } }
                        return allArrived.wait(timeout: .now() + 5) == .success
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(
            results.count == lanes && results.allSatisfy { $0 },
            "all \(lanes) lanes were blocked at once: \(arrived.withLock { $0 }) arrived")
    }
}
