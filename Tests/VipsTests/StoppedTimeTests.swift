import Foundation
import Testing
import Vips

/// Time the process spends stopped is left out of time limits: `StoppedTime` finds a stop by a
/// beat that came late, and a deadline's timer that fires by the monotonic clock waits on.
@Suite struct StoppedTimeTests {
    @Test func aBeatThatComesLateLeavesTheStopOut() {
        // Given a clock beating on time, its monotonic time moved by hand
        let uptime = Locked(100.0)
        let clock = StoppedTime(grace: 2, beatInterval: 0.25, beatsItself: false, uptime: { uptime.withLock { $0 } })
        for _ in 0..<4 {
            uptime.withLock { $0 += 0.25 }
            clock.beat()
        }
        #expect(clock.runningTime() == 101)
        // When the process is stopped for 30 s, then runs again
        uptime.withLock { $0 += 30 }
        // Then the stop is left out at once (but for a beat's interval), before the next beat and after it
        #expect(clock.runningTime() == 101.25)
        clock.beat()
        #expect(clock.runningTime() == 101.25)
        uptime.withLock { $0 += 0.25 }
        clock.beat()
        #expect(clock.runningTime() == 101.5)
        // and a beat only a little late (a busy machine) counts as running time
        uptime.withLock { $0 += 1.5 }
        clock.beat()
        #expect(clock.runningTime() == 103)
    }

    @Test func aDeadlineWhoseTimerFiresBeforeItsClockRunsOutWaitsOn() throws {
        // Given a deadline of half a second whose clock found a stop of 3 s just after it began
        let stopped = Locked(0.0)
        let deadline = VipsDeadline(
            seconds: 0.5, clock: .init { VipsDeadline.Clock.uptime.now() - stopped.withLock { $0 } })
        defer { deadline.cancel() }
        stopped.withLock { $0 = 3 }
        // When its timer fires, half a second later by the monotonic clock
        Thread.sleep(forTimeInterval: 1)
        // Then it has not expired: half a second has not passed on its clock
        #expect(!deadline.hasExpired)
        // and it expires once it has, by its timer alone (hasExpired reads no clock)
        var waited = 0.0
        while !deadline.hasExpired, waited < 20 {
            Thread.sleep(forTimeInterval: 0.1)
            waited += 0.1
        }
        #expect(deadline.hasExpired)
    }
}
