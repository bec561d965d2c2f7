import Foundation
import Testing
import Vips
import TestSupport

/// Threads that drop images built with libvips' vector code (Orc) at the same moment: Debian 12's
/// Orc frees that code without a lock, and this crashed the process within seconds before
/// `VipsImage.droppingReference` made the drops take turns.
struct ReferenceDropTests {
    @Test func fourThreadsResizingAndBlurringAtOnceDropTheirImagesSafely() throws {
        let source = try Fixtures.gradient(width: 120, height: 90)
        let failures = Locked(0)
        let done = DispatchGroup()
        for thread in 0..<4 {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                for index in 0..<1500 {
                    // Each iteration builds and drops a resize and a blur (both compile vector code).
                    let scale = 0.37 + Double((index + thread) % 5) * 0.01
                    let made = try? source.resized(horizontalScale: scale, verticalScale: scale, kernel: .lanczos3)
                        .gaussianBlurred(sigma: 1.5).rendered()
                    if made == nil { failures.withLock { $0 += 1 } }
                }
            }
        }
        #expect(done.wait(timeout: .now() + 300) == .success, "the threads finished")
        #expect(failures.withLock { $0 } == 0)
    }
}
