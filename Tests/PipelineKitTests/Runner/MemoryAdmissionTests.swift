import Testing
import Vips

@testable import PipelineKit

/// Admission by memory, by itself: never over capacity, first come first served, and a
/// cancelled wait gives nothing away.
struct MemoryAdmissionTests {
    @Test func whatIsAdmittedAtOnceNeverExceedsTheCapacityAndEveryoneGetsIn() async {
        let admission = MemoryAdmission(capacity: 100)
        let held = Locked((now: Int64(0), peak: Int64(0)))
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                let bytes = Int64(10 + (index * 7) % 60)
                group.addTask {
                    guard await admission.admit(bytes) else { return }
                    held.withLock {
                        $0.now += bytes; $0.peak = max($0.peak, $0.now)
                    }
                    for _ in 0..<3 { await Task.yield() }
                    held.withLock { $0.now -= bytes }
                    admission.release(bytes)
                }
            }
        }
        #expect(held.withLock { $0.peak } <= 100)
        #expect(held.withLock { $0.now } == 0)
        #expect(admission.peakAdmitted <= 100 && admission.peakAdmitted >= 60, "several were admitted side by side")
    }

    @Test func aLargeInputIsNotPassedOverBySmallOnes() async throws {
        let admission = MemoryAdmission(capacity: 100)
        #expect(await admission.admit(60))
        let order = Locked<[String]>([])
        let large = Task { if await admission.admit(95) { order.withLock { $0.append("large") } } }
        try await waitUntil("the admission's waiters settle") { admission.waiting == 1 }
        // 10 would fit beside the 60, but the large one asked first.
        let small = Task { if await admission.admit(10) { order.withLock { $0.append("small") } } }
        try await waitUntil("the admission's waiters settle") { admission.waiting == 2 }
        #expect(order.withLock { $0 }.isEmpty)
        // The large one goes in, and the small one, which does not fit beside it, waits on. (Were
        // both let in by one release, their tasks would record the order in a race.)
        admission.release(60)
        await large.value
        #expect(order.withLock { $0 } == ["large"] && admission.waiting == 1)
        admission.release(95)
        await small.value
        #expect(order.withLock { $0 } == ["large", "small"])
        #expect(admission.peakAdmitted == 95)
    }

    @Test func aCancelledWaitIsNotAdmittedAndLetsThoseBehindIt() async throws {
        let admission = MemoryAdmission(capacity: 100)
        #expect(await admission.admit(80))
        let cancelled = Task { await admission.admit(90) }
        try await waitUntil("the admission's waiters settle") { admission.waiting == 1 }
        let behind = Task { await admission.admit(20) }
        try await waitUntil("the admission's waiters settle") { admission.waiting == 2 }
        cancelled.cancel()
        #expect(await cancelled.value == false)
        // With the 90 gone from the head of the queue, 20 fits beside the 80.
        #expect(await behind.value == true)
        #expect(admission.peakAdmitted == 100)
    }

    @Test func anInputLargerThanTheCapacityNeverFits() {
        let admission = MemoryAdmission(capacity: 100)
        #expect(admission.fits(100))
        #expect(!admission.fits(101))
        #expect(!MemoryAdmission(capacity: -5).fits(1), "a budget used up before the run starts admits nothing")
    }

    // MARK: The soft policy (decodes that cannot stream)

    @Test func softlyAnInputLargerThanTheCapacityGoesInAloneAndOnlyAlone() async throws {
        let admission = MemoryAdmission(capacity: 100, policy: .soft(overflowAt: 8))
        #expect(admission.admitNow(150), "alone, however large")
        #expect(!admission.admitNow(10), "nothing beside it past the capacity")
        admission.release(150)
        #expect(admission.admitNow(60))
        #expect(!admission.admitNow(150), "not beside another")
        admission.release(60)
    }

    @Test func softlyOneThatFitsPassesThoseWaitingForRoom() async throws {
        let admission = MemoryAdmission(capacity: 100, policy: .soft(overflowAt: 8))
        #expect(admission.admitNow(60))
        let order = Locked<[String]>([])
        let large = Task { if await admission.admit(80) { order.withLock { $0.append("large") } } }
        try await waitUntil("the admission's waiters settle") { admission.waiting == 1 }
        // 30 fits beside the 60 now: it does not queue behind the large one.
        #expect(await admission.admit(30))
        #expect(order.withLock { $0 }.isEmpty)
        admission.release(60)
        try await waitUntil("the admission's waiters settle") { admission.waiting == 1 && order.withLock { $0 }.isEmpty }
        admission.release(30)
        await large.value
        #expect(order.withLock { $0 } == ["large"], "in once the room is there")
        admission.release(80)
    }

    @Test func softlyTheOldestGoesInOverTheCapacityWhenTooManyWait() async throws {
        let admission = MemoryAdmission(capacity: 100, policy: .soft(overflowAt: 3))
        #expect(admission.admitNow(90))
        let admitted = Locked<[Int64]>([])
        var waits: [Task<Void, Never>] = []
        for bytes: Int64 in [50, 51] {
            waits.append(Task { if await admission.admit(bytes) { admitted.withLock { $0.append(bytes) } } })
            try await waitUntil("the admission's waiters settle") { admission.waiting == waits.count }
        }
        #expect(admitted.withLock { $0 }.isEmpty)
        // The third waiting makes three: the oldest (50) goes in beside the 90.
        waits.append(Task { if await admission.admit(52) { admitted.withLock { $0.append(52) } } })
        await waits[0].value
        #expect(admitted.withLock { $0 } == [50])
        #expect(admission.waiting == 2 && admission.peakAdmitted == 140)
        // No further arrivals: those waiting go in as twice the capacity has room: the 51 now,
        // the 52 once the 90 is done.
        admission.closeArrivals()
        await waits[1].value
        #expect(admitted.withLock { $0 } == [50, 51])
        #expect(admission.waiting == 1 && admission.peakAdmitted == 191)
        admission.release(90)
        await waits[2].value
        #expect(admitted.withLock { $0 } == [50, 51, 52])
        #expect(admission.peakAdmitted == 191)
        #expect(admission.admitNow(40), "after closing, any that fits within twice the capacity goes in at once")
        for bytes: Int64 in [50, 51, 52, 40] { admission.release(bytes) }
    }

    @Test func softlyNeverPastTwiceTheCapacityHoweverManyWait() async throws {
        let admission = MemoryAdmission(capacity: 100, policy: .soft(overflowAt: 2))
        #expect(admission.admitNow(150), "alone")
        let admitted = Locked(0)
        let waits = (0..<3).map { _ in
            Task { if await admission.admit(150) { admitted.withLock { $0 += 1 } } }
        }
        try await waitUntil("the admission's waiters settle") { admission.waiting + admitted.withLock { $0 } == 3 }
        // Too many wait, and then none will come, but each would take the total past 200.
        #expect(admitted.withLock { $0 } == 0)
        admission.closeArrivals()
        #expect(admission.waiting == 3 && admission.peakAdmitted == 150)
        // Each goes in alone as the one before it is done.
        for done in 1...3 {
            admission.release(150)
            try await waitUntil("the admission's waiters settle") { admitted.withLock { $0 } == done }
            #expect(admission.waiting == 3 - done && admission.peakAdmitted == 150)
        }
        for wait in waits { await wait.value }
        admission.release(150)
        #expect(admission.admitNow(100))
        admission.release(100)
    }

    @Test func softlyThoseLetInBesideWeighOnlyAgainstTheOthers() async throws {
        let admission = MemoryAdmission(capacity: 100, policy: .soft(overflowAt: 8))
        // PNGs read whole have an allowance of their own among themselves.
        #expect(admission.admitBesideNow(60))
        #expect(admission.admitBesideNow(60))
        #expect(!admission.admitNow(10), "a decode beside what the reads hold, past the capacity")
        // A decode waiting goes in once the reads are done.
        let admitted = Locked(false)
        let wait = Task { if await admission.admit(80) { admitted.withLock { $0 = true } } }
        try await waitUntil("the admission's waiters settle") { admission.waiting == 1 }
        admission.releaseBeside(60)
        #expect(admission.waiting == 1 && !admitted.withLock { $0 })
        admission.releaseBeside(60)
        await wait.value
        #expect(admitted.withLock { $0 })
        #expect(!admission.admitBesideNow(30), "a read beside a decode, past the capacity")
        #expect(admission.admitBesideNow(20))
        #expect(admission.peakAdmitted == 120)
        admission.releaseBeside(20)
        admission.release(80)
        #expect(admission.admitNow(150), "all given back: one goes in alone")
        #expect(!admission.admitBesideNow(1), "not beside a decode over the capacity")
        admission.release(150)
    }
}
