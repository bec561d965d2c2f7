import Dispatch
import Foundation
import TestSupport
import Testing

@testable import Vips

/// Orc, which libvips compiles its vector code with, corrupts its code memory when one thread
/// compiles or frees code while another does either (Debian 12's liborc). A crash needs many
/// thousands of builds to show, so these tests check the guard itself: while a test holds the
/// lock, each kind of build that compiles vector code, and each drop, waits for it; a build that
/// compiles none does not.
@Suite("Vector code compiled and freed one thread at a time")
struct VectorCodeTests {
    /// Long enough for any of these builds to finish under a sanitizer on a busy machine, so a
    /// build that does not wait for the lock is seen finishing. The lock is held this long for
    /// each case, and other suites' builds in the process wait it out.
    static let patience = 0.3

    /// What a thread made, kept here so that the thread drops nothing: a drop waits for the lock
    /// too, and would hide whether the build did.
    final class Made: @unchecked Sendable {
        private let kept = Locked<[Any]>([])
        private let failures = Locked<[String]>([])
        func keep(_ value: Any) { kept.withLock { $0.append(value) } }
        func fail(_ error: any Error) { failures.withLock { $0.append("\(error)") } }
        var count: Int { kept.withLock { $0.count } }
        var failed: [String] { failures.withLock { $0 } }
        func dropAll() { kept.withLock { $0.removeAll() } }
    }

    /// Runs `work` on a thread of its own while this thread holds the vector-code lock, and
    /// answers whether it finished before the lock was let go. Waits for it to finish either way.
    static func finishesWhileTheLockIsHeld(_ work: @escaping @Sendable () -> Void) -> Bool {
        let finished = DispatchSemaphore(value: 0)
        let finishedEarly = VipsImage.serializingVectorCode {
            Thread.detachNewThread {
                work()
                finished.signal()
            }
            return finished.wait(timeout: .now() + patience) == .success
        }
        if !finishedEarly {
            #expect(finished.wait(timeout: .now() + 60) == .success, "the work never finished once the lock was let go")
        }
        return finishedEarly
    }

    /// Builds that compile vector code for an 8-bit image: through the Swift API, which keeps
    /// the image, and by name, which keeps the built operation (`Vips.call` gives it up at once).
    static let compilingBuilds: [String: @Sendable (VipsImage, VipsImage) throws -> Any] = [
        "resized": { image, _ in try image.resized(horizontalScale: 0.5, verticalScale: 0.5, kernel: .lanczos3) },
        "gaussianBlurred": { image, _ in try image.gaussianBlurred(sigma: 1.5) },
        "smartCropped": { image, _ in try image.smartCropped(width: 24, height: 24, interest: .attention) },
        "reducev": { image, _ in try Vips.BuiltOperation("reducev", ["in": .image(image), "vshrink": .number(2)]) },
        "sharpen": { image, _ in try Vips.BuiltOperation("sharpen", ["in": .image(image)]) },
        "sobel": { image, _ in try Vips.BuiltOperation("sobel", ["in": .image(image)]) },
        "thumbnail_image": { image, _ in try Vips.BuiltOperation("thumbnail_image", ["in": .image(image), "width": .integer(16)]) },
        "conv": { image, mask in
            try Vips.BuiltOperation("conv", ["in": .image(image), "mask": .image(mask), "precision": .string("integer")])
        },
    ]

    @Test(arguments: compilingBuilds.keys.sorted())
    func aBuildThatCompilesVectorCodeWaitsForTheLock(name: String) throws {
        // Given an 8-bit image, for which libvips compiles vector code, and a mask to convolve with
        let image = try Fixtures.gradient(width: 48, height: 48)
        let mask = try #require(try Vips.call("gaussmat", ["sigma": .number(1), "min_ampl": .number(0.2)])["out"]?.image)
        let build = try #require(Self.compilingBuilds[name])
        let made = Made()
        // When it is built while another thread holds the lock
        let finishedEarly = Self.finishesWhileTheLockIsHeld {
            do { made.keep(try build(image, mask)) } catch { made.fail(error) }
        }
        // Then it waits for the lock, and is built once the lock is let go
        #expect(!finishedEarly, "\(name) was built while another thread held the lock")
        #expect(made.failed == [])
        #expect(made.count == 1)
        made.dropAll()
    }

    @Test func droppingAnImageWaitsForTheLock() throws {
        // Given the last reference to a resized image, whose operation holds vector code
        let made = Made()
        made.keep(try Fixtures.gradient(width: 48, height: 48).resized(horizontalScale: 0.5, verticalScale: 0.5, kernel: .lanczos3))
        // When another thread drops it while the lock is held
        let finishedEarly = Self.finishesWhileTheLockIsHeld { made.dropAll() }
        // Then the drop waits for the lock
        #expect(!finishedEarly)
        #expect(made.count == 0)
    }

    @Test func aBuildThatCompilesNoVectorCodeDoesNotWait() throws {
        // Given an image
        let image = try Fixtures.gradient(width: 48, height: 48)
        let made = Made()
        // When it is premultiplied and flipped while another thread holds the lock
        let finishedEarly = Self.finishesWhileTheLockIsHeld {
            do {
                made.keep(try image.premultiplied())
                made.keep(try Vips.BuiltOperation("flip", ["in": .image(image), "direction": .string("horizontal")]))
            } catch {
                made.fail(error)
            }
        }
        // Then neither build waits: only the builds that compile vector code are serialized
        #expect(finishedEarly)
        #expect(made.failed == [])
        #expect(made.count == 2)
        made.dropAll()
    }
}
