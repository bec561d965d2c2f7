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
                    held.withLock { $0.now += bytes; $0.peak = max($0.peak, $0.now) }
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
        let large = Task { if await admission.admit(50) { order.withLock { $0.append("large") } } }
        try await waitUntil { admission.waiting == 1 }
        // 10 would fit beside the 60, but the large one asked first.
        let small = Task { if await admission.admit(10) { order.withLock { $0.append("small") } } }
        try await waitUntil { admission.waiting == 2 }
        #expect(order.withLock { $0 }.isEmpty)
        admission.release(60)
        await large.value
        await small.value
        #expect(order.withLock { $0 } == ["large", "small"])
        #expect(admission.peakAdmitted == 60)
    }

    @Test func aCancelledWaitIsNotAdmittedAndLetsThoseBehindIt() async throws {
        let admission = MemoryAdmission(capacity: 100)
        #expect(await admission.admit(80))
        let cancelled = Task { await admission.admit(90) }
        try await waitUntil { admission.waiting == 1 }
        let behind = Task { await admission.admit(20) }
        try await waitUntil { admission.waiting == 2 }
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

    /// Yields until `condition` holds, at most 10,000 times.
    private func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<10_000 where !condition() {
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(condition())
    }
}
