/// The processors a pipeline file may name in its `steps`, by their `name`.
public struct ProcessorRegistry: Sendable {
    /// The processor types, in the order they were registered (the order `pipeline plugins` lists).
    public let processors: [any ImageProcessing.Type]

    public init(_ processors: [any ImageProcessing.Type]) {
        self.processors = processors
    }

    /// The processor type registered as `name`.
    public func processor(named name: String) -> (any ImageProcessing.Type)? {
        processors.first { $0.name == name }
    }

    /// The same registry with `processor` added (or replacing one of the same name).
    public func adding(_ processor: any ImageProcessing.Type) -> ProcessorRegistry {
        ProcessorRegistry(processors.filter { $0.name != processor.name } + [processor])
    }

    /// The processors as variants of a step, for validation and the schema.
    var variants: [Variant] {
        processors.map { Variant(name: $0.name, summary: $0.summary, options: $0.options) }
    }
}
