import Foundation
import PipelineKit
import Vips

/// Records which image object each step call received, keyed by the test's `tag`, so a test
/// can check that every output of an input started from the same decoded image.
package struct RecordingProcessor: ImageProcessing {
    package static let name = "record"
    package static let summary = "test: records its input image"
    package static let options: [Option] = [Option("tag", .string(nonEmpty: true), required: true, help: "test name")]

    package struct Call: Sendable {
        package let input: String
        package let output: String
        package let image: ObjectIdentifier
        package let size: ImageSize
    }

    package static let calls = Locked<[String: [Call]]>([:])
    package let tag: String

    package init(options: ProcessorOptions) throws(OptionError) {
        tag = try options.string("tag")
    }

    package var identifier: String { "record(\(tag))" }
    package func outputSize(for size: ImageSize) -> ImageSize { size }

    package func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        let call = Call(input: context.input, output: context.output, image: ObjectIdentifier(image), size: image.size)
        Self.calls.withLock { $0[tag, default: []].append(call) }
        return image
    }

    package static func calls(tagged tag: String) -> [Call] {
        calls.withLock { $0[tag] ?? [] }
    }
}

/// Always fails: a processor error must fail its output only. With `cancellation`, it throws
/// `CancellationError`, as a step's own `Task.checkCancellation()` would.
package struct FailingProcessor: ImageProcessing {
    package static let name = "fail"
    package static let summary = "test: always fails"
    package static let options: [Option] = [.boolean("cancellation", default: false, help: "throw CancellationError")]

    package struct Failure: Error, CustomStringConvertible {
        package var description: String { "this processor always fails" }
    }

    let cancellation: Bool
    package init(options: ProcessorOptions) throws(OptionError) { cancellation = try options.bool("cancellation") }
    package var identifier: String { "fail(\(cancellation))" }
    package func outputSize(for size: ImageSize) -> ImageSize { size }
    package func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        if cancellation { throw CancellationError() }
        throw Failure()
    }
}

/// Blocks its lane on inputs whose name contains `input`, and passes every image through: a
/// step slower than an input's time limit, whatever the machine. It first waits for the file
/// `after`, when given (at most ten minutes: a test may hold a lane with it until it has seen
/// what it checks, which a loaded machine running a sanitizer can take minutes to get to), then
/// sleeps `seconds`; with `honoursTime`, in slices, throwing once the context says it should
/// stop, and noting in `sleptWhole` each input it slept the whole time on.
package struct SleepingProcessor: ImageProcessing {
    package static let name = "sleep"
    package static let summary = "test: sleeps on some inputs"
    package static let options: [Option] = [
        Option("seconds", .number(0...60), required: true, help: "how long"),
        Option("input", .string(nonEmpty: true), required: true, help: "sleeps on inputs whose name contains this"),
        Option("after", .string(nonEmpty: true), help: "a file to wait for first"),
        .boolean("honoursTime", default: false, help: "stops when the context says so"),
    ]

    /// The inputs a step that honours time slept the whole time on.
    package static let sleptWhole = Locked<Set<String>>([])

    package struct Stopped: Error, CustomStringConvertible {
        package var description: String { "stopped as the context said" }
    }

    package let seconds: Double
    package let input: String
    package let after: String?
    package let honoursTime: Bool

    package init(options: ProcessorOptions) throws(OptionError) {
        seconds = try options.double("seconds")
        input = try options.string("input")
        after = try options.optionalString("after")
        honoursTime = try options.bool("honoursTime")
    }

    package var identifier: String { "sleep(\(seconds),\(input),\(after ?? ""),\(honoursTime))" }
    package func outputSize(for size: ImageSize) -> ImageSize { size }

    package func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        guard context.input.contains(input) else { return image }
        if let after {
            for _ in 0..<6000 where !FileManager.default.fileExists(atPath: after) { Thread.sleep(forTimeInterval: 0.1) }
        }
        guard honoursTime else {
            Thread.sleep(forTimeInterval: seconds)
            return image
        }
        for _ in 0..<Int(seconds * 20) {
            if context.shouldStop { throw Stopped() }
            Thread.sleep(forTimeInterval: 0.05)
        }
        Self.sleptWhole.withLock { _ = $0.insert(context.input) }
        return image
    }
}
