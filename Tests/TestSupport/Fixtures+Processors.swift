import Foundation
import PipelineKit
import Vips

/// Processors, their options and contexts, for tests that run one step by itself.
extension Fixtures {
    package static func options<Processor: ImageProcessing>(_ values: [String: any Sendable], for type: Processor.Type) -> ProcessorOptions
    {
        ProcessorOptions(values: values.mapValues { JSONNode(plain: $0) }, definitions: Processor.options)
    }

    package static func processor<Processor: ImageProcessing>(_ type: Processor.Type, _ values: [String: any Sendable]) throws -> Processor
    {
        try Processor(options: options(values, for: type))
    }

    package static func context(for image: VipsImage) -> ProcessingContext {
        ProcessingContext(input: "fixture", output: "test", originalSize: image.size)
    }
}

extension ImageProcessing {
    /// Processes `image` with a fixture context.
    package func applied(to image: VipsImage) throws -> VipsImage {
        try process(image, context: Fixtures.context(for: image))
    }
}
