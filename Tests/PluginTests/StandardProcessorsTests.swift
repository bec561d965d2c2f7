import PipelineKit
import StandardProcessors
import TestSupport
import Testing
import VipsColour
import VipsCrop
import VipsFilters
import VipsGeometry
import VipsResize

@Suite("StandardProcessors")
struct StandardProcessorsTests {
    @Test func standardRegistryOffersResizeCropAndBlurByName() {
        // Given the built-in registry
        let registry = ProcessorRegistry.standard

        // Then it lists the three plugins first, in order, under their step names
        #expect(Array(registry.processors.map { $0.name }.prefix(3)) == ["resize", "crop", "blur"])
        #expect(registry.processor(named: "resize") == Resize.self)
        #expect(registry.processor(named: "crop") == Crop.self)
        #expect(registry.processor(named: "blur") == Blur.self)
    }

    @Test func standardRegistryOffersTheColourStepsInOrderUnderBothSpellings() {
        // Given the built-in registry
        let registry = ProcessorRegistry.standard
        let colourSteps = ["flatten", "greyscale", "grayscale", "modulate", "tint", "gamma", "normalise", "normalize", "negate"]

        // Then the colour steps are listed together, in order, each under its own type
        let names = registry.processors.map { $0.name }
        let start = names.firstIndex(of: "flatten")
        #expect(start.map { Array(names[$0...].prefix(colourSteps.count)) } == colourSteps)
        #expect(registry.conflicts.isEmpty)
        #expect(registry.processor(named: "greyscale") == Greyscale.self)
        #expect(registry.processor(named: "grayscale") == Grayscale.self)
        #expect(registry.processor(named: "normalise") == Normalise.self)
        #expect(registry.processor(named: "normalize") == Normalize.self)
        #expect(registry.processor(named: "negate") == Negate.self)
    }

    @Test func standardRegistryOffersTheGeometryAndFilterStepsAfterBlur() {
        // Given the built-in registry
        let names = ProcessorRegistry.standard.processors.map { $0.name }

        // Then the geometry and filter steps come after blur, in order (other families may sit between)
        let steps = ["rotate", "flip", "flop", "extend", "trim", "sharpen", "median"]
        #expect(names.drop { $0 != "blur" }.filter(steps.contains) == steps)
        #expect(ProcessorRegistry.standard.processor(named: "rotate") == Rotate.self)
        #expect(ProcessorRegistry.standard.processor(named: "median") == Median.self)
    }
}
