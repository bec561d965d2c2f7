import Dispatch
import Testing
import Vips

@testable import PipelineKit

/// The one waiting primitive, by itself: first come first served, cancellation before and after
/// queueing, weighted admission, and no wake-up lost when arrivals, releases and cancellations race.
struct WaitingRoomTests {
    /// A counting semaphore on the room, as its users build theirs: permits in the state, a
    /// waiter let out with true when it gets one, false when cancelled.
    private final class Semaphore: Sendable {
        let room: WaitingRoom<Int, Int, Bool>

        init(permits: Int) {
            room = WaitingRoom(permits)
        }

        func acquire(_ id: Int = 0, cancellable: Bool = true) async -> Bool {
            await room.wait(id, cancellation: cancellable ? .init(false) : nil) { permits, waiters in
                guard permits > 0 else { return }
                permits -= 1
                waiters.letOut(at: waiters.count - 1, with: true)
            }
        }

        func release() {
            room.withLock { permits, waiters in
                if waiters.isEmpty { permits += 1 } else { waiters.letOutFirst(with: true) }
            }
        }

        var waiting: Int { room.withLock { $1.count } }
        var permits: Int { room.withLock { permits, _ in permits } }
    }

    @Test func waitersAreLetOutInTheOrderTheyArrived() async throws {
        let semaphore = Semaphore(permits: 0)
        let order = Locked<[Int]>([])
        var tasks: [Task<Void, Never>] = []
        // Given five waiters, each queued before the next arrives
        for id in 0..<5 {
            tasks.append(
                Task {
                    if await semaphore.acquire(id) { order.withLock { $0.append(id) } }
                })
            try await waitUntil("waiter \(id) queued") { semaphore.waiting == id + 1 }
        }
        #expect(semaphore.room.withLock { _, waiters in (0..<waiters.count).map { waiters[$0] } } == [0, 1, 2, 3, 4])
        // When permits come one at a time
        for released in 1...5 {
            semaphore.release()
            try await waitUntil("\(released) let out") { order.withLock { $0.count } == released }
        }
        for task in tasks { await task.value }
        // Then they went in the order they came
        #expect(order.withLock { $0 } == [0, 1, 2, 3, 4])
    }

    @Test func aWaitCancelledBeforeItArrivesDoesNotQueue() async {
        let semaphore = Semaphore(permits: 1)
        let left = Locked(0)
        let room = semaphore.room
        let result = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await room.wait(7, cancellation: .init(false) { _, _ in left.withLock { $0 += 1 } }) { permits, waiters in
                permits -= 1
                waiters.letOutFirst(with: true)
            }
        }.value
        // Cancelled first: not admitted even though a permit was free, and nothing left the queue.
        #expect(result == false)
        #expect(semaphore.permits == 1 && semaphore.waiting == 0)
        #expect(left.withLock { $0 } == 0)
    }

    @Test func aWaitCancelledWhileQueuedLeavesAtOnceAndTheNextMovesUp() async throws {
        let semaphore = Semaphore(permits: 0)
        let left = Locked<[Int]>([])
        let room = semaphore.room
        // Given two waiters, the first cancellable with a note of its leaving
        let first = Task {
            await room.wait(1, cancellation: .init(false) { _, waiters in left.withLock { $0.append(waiters.count) } }) { _, _ in }
        }
        try await waitUntil("one waiting") { semaphore.waiting == 1 }
        let second = Task { await semaphore.acquire(2) }
        try await waitUntil("two waiting") { semaphore.waiting == 2 }

        // When the first is cancelled
        first.cancel()

        // Then it leaves with the cancellation's value, `left` sees the one behind it, and the
        // next permit goes to the second
        #expect(await first.value == false)
        #expect(left.withLock { $0 } == [1])
        #expect(semaphore.waiting == 1)
        semaphore.release()
        #expect(await second.value == true)
        #expect(semaphore.waiting == 0 && semaphore.permits == 0)
    }

    @Test func aWaitWithoutCancellationEndsOnlyWhenLetOut() async throws {
        let semaphore = Semaphore(permits: 0)
        let waiter = Task { await semaphore.acquire(cancellable: false) }
        try await waitUntil("one waiting") { semaphore.waiting == 1 }
        // Task.cancel runs cancellation handlers before it returns: had the wait one, it would
        // have left by now.
        waiter.cancel()
        #expect(semaphore.waiting == 1)
        semaphore.release()
        #expect(await waiter.value == true)
    }

    @Test func weightedWaitersGoInFirstComeFirstServedAsTheyFit() async throws {
        // A weighted admission: bytes in the state, each waiter's ticket its weight.
        let room = WaitingRoom<Int, Int, Bool>(0)
        let capacity = 10
        // The order is kept as the room lets waiters in, under its lock: the tasks let in resume
        // in whatever order the executor runs them.
        let admitted = Locked<[Int]>([])
        @Sendable func admit(_ state: inout Int, _ waiters: inout WaitingRoom<Int, Int, Bool>.Waiters) {
            while !waiters.isEmpty, state + waiters[0] <= capacity {
                state += waiters[0]
                admitted.withLock { $0.append(waiters[0]) }
                waiters.letOutFirst(with: true)
            }
        }
        func ask(_ weight: Int) -> Task<Bool, Never> {
            Task { await room.wait(weight, cancellation: .init(false, left: admit), arriving: admit) }
        }
        // Given 6 in, then 5 waiting for room, then 3 behind it (which would fit, but waits its turn)
        #expect(await ask(6).value)
        let five = ask(5)
        try await waitUntil("one waiting") { room.withLock { $1.count } == 1 }
        let three = ask(3)
        try await waitUntil("two waiting") { room.withLock { $1.count } == 2 }
        #expect(admitted.withLock { $0 } == [6])

        // When the 6 leaves, the 5 and the 3 fit together and go in, in order
        room.withLock { state, waiters in
            state -= 6
            admit(&state, &waiters)
        }
        #expect(await five.value)
        #expect(await three.value)
        #expect(admitted.withLock { $0 } == [6, 5, 3])
        #expect(room.withLock { state, waiters in state == 8 && waiters.isEmpty })
    }

    @Test func takenWaitersAreLetGoLaterInOrder() async throws {
        let room = WaitingRoom<Void, Int, String>(())
        let tasks = (0..<3).map { id in Task { await room.wait(id) { _, _ in } } }
        try await waitUntil("three waiting") { room.withLock { $1.count } == 3 }
        let taken = room.withLock { _, waiters in waiters.takeAll() }
        #expect(room.withLock { $1.isEmpty })
        for waiter in taken { waiter.letGo(with: "let go \(waiter.ticket)") }
        var results: [String] = []
        for task in tasks { results.append(await task.value) }
        #expect(Set(results) == ["let go 0", "let go 1", "let go 2"])
        #expect(Set(taken.map(\.ticket)) == [0, 1, 2])
    }

    /// Arrivals, releases from other threads and cancellations all at once: every permit ends up
    /// with exactly one waiter or back in the semaphore, and every wait ends.
    @Test func noWakeUpIsLostWhenArrivalsReleasesAndCancellationsRace() async {
        let rounds = 5, waiters = 50
        for _ in 0..<rounds {
            let semaphore = Semaphore(permits: 0)
            let finished = Locked(0)
            let tasks = (0..<waiters).map { id in
                Task {
                    let admitted = await semaphore.acquire(id)
                    finished.withLock { $0 += 1 }
                    return admitted
                }
            }
            // Releases from Dispatch threads while the waiters arrive, and half of them cancelled.
            let releases = Task {
                await runBlocking(on: .global()) {
                    DispatchQueue.concurrentPerform(iterations: waiters / 2) { _ in semaphore.release() }
                }
            }
            for (id, task) in tasks.enumerated() where id.isMultiple(of: 2) { task.cancel() }
            await releases.value
            // Never a permit left lying while someone waits: that would be a lost wake-up.
            #expect(semaphore.room.withLock { permits, waiters in permits == 0 || waiters.isEmpty })
            // Those still queued, or yet to arrive, get a permit each, until every wait has ended.
            var laterReleases = 0
            for _ in 0..<1_000_000 {
                if finished.withLock({ $0 }) == waiters { break }
                if semaphore.waiting > 0 {
                    semaphore.release()
                    laterReleases += 1
                } else {
                    await Task.yield()
                }
            }
            #expect(finished.withLock { $0 } == waiters)
            var admitted = 0, cancelled = 0
            for task in tasks {
                if await task.value { admitted += 1 } else { cancelled += 1 }
            }
            #expect(admitted + cancelled == waiters && cancelled <= waiters / 2)
            // Every permit given went to exactly one waiter or is still there.
            #expect(admitted + semaphore.permits == waiters / 2 + laterReleases)
            #expect(semaphore.waiting == 0)
        }
    }

    @Test func blockingWorkRunsOnTheQueueItIsGiven() async {
        let queue = DispatchQueue(label: "waiting-room-tests")
        let key = DispatchSpecificKey<String>()
        queue.setSpecific(key: key, value: "the test's queue")
        let ranOn = await runBlocking(on: queue) { DispatchQueue.getSpecific(key: key) }
        #expect(ranOn == "the test's queue")
    }
}
