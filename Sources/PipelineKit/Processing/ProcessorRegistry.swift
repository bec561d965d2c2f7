/// The processors a pipeline file may name in its `steps`, by their `name`.
///
/// Built by listing processor types, the built-in ones (`.standard`, from `StandardProcessors`)
/// and a plugin package's own (`.standard.adding(Sepia.self)`). Two processors with one name
/// are never silently replaced: the registry keeps the first and records the clash in
/// `conflicts`, which `Pipeline` and `PipelineCLI` report as an error naming both types.
public struct ProcessorRegistry: Sendable {
    /// The processor types, in the order they were registered (the order `pipeline plugins` lists).
    public let processors: [any ImageProcessing.Type]
    /// One message per processor that was registered under a name already taken.
    public let conflicts: [NameConflict]
    /// Options a processor declares twice, or with a default its own shape refuses: mistakes
    /// of the processor's, which no pipeline file could mend.
    public let declarationProblems: [DeclarationProblem]
    /// The face detector steps may use (`"position": "faces"`), nil when the build has none.
    public private(set) var faceFinder: (any FaceFinding)?

    /// A registry of `processors`; a name registered twice keeps the first type and records a
    /// conflict, unless both are the one type (a plugin listed by two packages), kept once.
    public init(_ processors: [any ImageProcessing.Type]) {
        var kept: [any ImageProcessing.Type] = []
        var conflicts: [NameConflict] = []
        for processor in processors {
            if let first = kept.first(where: { $0.name == processor.name }) {
                guard ObjectIdentifier(first) != ObjectIdentifier(processor) else { continue }
                conflicts.append(NameConflict(name: processor.name, first: first, second: processor))
            } else {
                kept.append(processor)
            }
        }
        self.processors = kept
        self.conflicts = conflicts
        declarationProblems = kept.flatMap(DeclarationProblem.problems(of:))
    }

    /// Every mistake in how the processors were registered and declared, as messages naming
    /// the types: `conflicts`, then `declarationProblems`. A pipeline file is refused while
    /// there is one.
    public var problems: [String] {
        conflicts.map(\.description) + declarationProblems.map(\.description)
    }

    /// The processor type registered as `name`.
    public func processor(named name: String) -> (any ImageProcessing.Type)? {
        processors.first { $0.name == name }
    }

    /// The same registry with `processors` added after the ones it has. A name that is already
    /// taken is a conflict (see `conflicts`), not a replacement.
    public func adding(_ processors: any ImageProcessing.Type...) -> ProcessorRegistry {
        adding(contentsOf: processors)
    }

    /// The same registry with `processors` added after the ones it has.
    public func adding(contentsOf processors: [any ImageProcessing.Type]) -> ProcessorRegistry {
        let combined = ProcessorRegistry(self.processors + processors)
        var registry = ProcessorRegistry(
            processors: combined.processors, conflicts: conflicts + combined.conflicts, declarationProblems: combined.declarationProblems)
        registry.faceFinder = faceFinder
        return registry
    }

    /// The same registry with `finder` as its face detector.
    public func findingFaces(with finder: any FaceFinding) -> ProcessorRegistry {
        var registry = self
        registry.faceFinder = finder
        return registry
    }

    /// Throws the first name conflict, for callers that want registration mistakes as errors
    /// (`problems` has every mistake, the declarations' too).
    public func checked() throws(NameConflict) -> ProcessorRegistry {
        if let conflict = conflicts.first { throw conflict }
        return self
    }

    private init(processors: [any ImageProcessing.Type], conflicts: [NameConflict], declarationProblems: [DeclarationProblem]) {
        self.processors = processors
        self.conflicts = conflicts
        self.declarationProblems = declarationProblems
    }

    /// The processors as variants of a step, for validation and the schema.
    var variants: [Variant] {
        processors.map { Variant(name: $0.name, summary: $0.summary, options: $0.options, acceptsOtherKeys: $0.acceptsUndeclaredOptions) }
    }
}

extension ProcessorRegistry {
    /// Two processor types registered under one step name.
    public struct NameConflict: Error, Sendable, CustomStringConvertible {
        /// The step name both types claim.
        public let name: String
        /// The type registered first, which the registry keeps.
        public let first: any ImageProcessing.Type
        /// The type registered later under the same name.
        public let second: any ImageProcessing.Type

        /// The message, naming the step and both types.
        public var description: String {
            "two processors are registered as step \"\(name)\": \(String(reflecting: first)) and \(String(reflecting: second)); "
                + "give one of them another `name`"
        }
    }
}

extension ProcessorRegistry {
    /// An option a processor type declares twice, with a shape no value or schema can be
    /// written for, or with a default that its own shape refuses.
    public struct DeclarationProblem: Error, Sendable, CustomStringConvertible {
        /// The processor type that declares the option.
        public let processor: any ImageProcessing.Type
        /// The option's name.
        public let option: String
        /// What is wrong with the declaration.
        public let reason: String

        /// The message, naming the step, the type and the option.
        public var description: String {
            "processor \"\(processor.name)\" (\(String(reflecting: processor))) declares option \"\(option)\" \(reason); "
                + "mend the declaration in the processor's `options`"
        }

        /// What is wrong with the declarations of `processor`'s options.
        static func problems(of processor: any ImageProcessing.Type) -> [DeclarationProblem] {
            var problems: [DeclarationProblem] = []
            var seen: Set<String> = []
            for option in processor.options {
                guard seen.insert(option.name).inserted else {
                    problems.append(DeclarationProblem(processor: processor, option: option.name, reason: "twice"))
                    continue
                }
                if let fault = option.shape.declarationFault {
                    problems.append(DeclarationProblem(processor: processor, option: option.name, reason: fault))
                    continue
                }
                guard let value = option.defaultValue else { continue }
                var validator = ShapeValidator()
                validator.check(value, against: option.shape, at: option.name)
                if let refusal = validator.problems.first {
                    problems.append(
                        DeclarationProblem(
                            processor: processor, option: option.name,
                            reason: "with the default \(value.jsonText), which its shape refuses: \(refusal.message)"))
                }
            }
            return problems
        }
    }
}

extension ValueShape {
    /// What makes the shape one that cannot be declared: a number range with a bound that is not
    /// finite, which JSON cannot write (`pipeline schema` would print a document that is not
    /// JSON), or a choice of no values, which no value meets.
    fileprivate var declarationFault: String? {
        switch self {
        case .number(let range) where !range.lowerBound.isFinite || !range.upperBound.isFinite:
            "with the range \(range.lowerBound)…\(range.upperBound): JSON has no infinity, so give the bounds as finite numbers"
        case .choice(let values) where values.isEmpty: "as a choice of no values"
        case .array(let shape, _): shape.declarationFault
        case .anyOf(let shapes): shapes.lazy.compactMap(\.declarationFault).first
        case .object(let options): options.lazy.compactMap(\.shape.declarationFault).first
        case .tagged(_, let variants), .singleKey(let variants):
            variants.lazy.flatMap(\.options).compactMap(\.shape.declarationFault).first
        default: nil
        }
    }
}
