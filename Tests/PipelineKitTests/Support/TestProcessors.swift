import Foundation
import Vips
import PipelineKit

/// Records which image object each step call received, keyed by the test's `tag`, so a test
/// can check that every output of an input started from the same decoded image.
struct RecordingProcessor: ImageProcessing {
    static let name = "record"
    static let summary = "test: records its input image"
    static let options: [Option] = [Option("tag", .string(nonEmpty: true), required: true, help: "test name")]

    struct Call: Sendable {
        let input: String
        let output: String
        let image: ObjectIdentifier
        let size: ImageSize
    }

    static let calls = Locked<[String: [Call]]>([:])
    let tag: String

    init(options: ProcessorOptions) throws(OptionError) {
        tag = try options.string("tag")
    }

    var identifier: String { "record(\(tag))" }
    func outputSize(for size: ImageSize) -> ImageSize { size }

    func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage {
        let call = Call(input: context.input, output: context.output, image: ObjectIdentifier(image), size: image.size)
        Self.calls.withLock { $0[tag, default: []].append(call) }
        return image
    }

    static func calls(tagged tag: String) -> [Call] {
        calls.withLock { $0[tag] ?? [] }
    }
}

/// Always fails: a processor error must fail its output only.
struct FailingProcessor: ImageProcessing {
    static let name = "fail"
    static let summary = "test: always fails"
    static let options: [Option] = []

    struct Failure: Error, CustomStringConvertible {
        var description: String { "this processor always fails" }
    }

    init(options: ProcessorOptions) throws(OptionError) {}
    var identifier: String { "fail" }
    func outputSize(for size: ImageSize) -> ImageSize { size }
    func process(_ image: VipsImage, context: ProcessingContext) throws -> VipsImage { throw Failure() }
}
