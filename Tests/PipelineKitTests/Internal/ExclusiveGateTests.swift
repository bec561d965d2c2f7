import Dispatch
import Foundation
import Testing

@testable import PipelineKit

/// The gate the decoder reads a failure's reason through, alone: a caller waiting to be alone
/// gives up by its deadline rather than hold every later caller back behind a read that does
/// not end.
@Suite struct ExclusiveGateTests {
    @Test func aCallerWaitingToBeAloneGivesUpByItsDeadlineAndLetsTheOthersOn() throws {
        // Given a shared caller that holds the gate until it is told to leave
        let gate = ExclusiveGate()
        let entered = DispatchSemaphore(value: 0)
        let leave = DispatchSemaphore(value: 0)
        let left = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            gate.shared { () -> Void in
                entered.signal()
                _ = leave.wait(timeout: .now() + 30)
            }
            left.signal()
        }
        #expect(entered.wait(timeout: .now() + 10) == .success)
        // When a caller asks to be alone until a deadline a moment away
        let ran = try gate.exclusive(waitingUntil: Date(timeIntervalSinceNow: 0.2)) { () throws(CancellationError) in true }
        // Then it gives up without running, and a new shared caller gets in beside the first
        #expect(ran == nil)
        let sharedRan = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            gate.shared { () -> Void in sharedRan.signal() }
        }
        #expect(sharedRan.wait(timeout: .now() + 10) == .success)
        // and once the first has left, a caller alone runs
        leave.signal()
        #expect(left.wait(timeout: .now() + 10) == .success)
        let alone = try gate.exclusive(waitingUntil: Date(timeIntervalSinceNow: 10)) { () throws(CancellationError) in true }
        #expect(alone == true)
    }
}
