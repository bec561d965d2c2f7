import PipelineKit
import StandardProcessors
import Testing
import VipsFilters
import VipsCrop
import VipsGeometry
import VipsResize

@Suite("StandardProcessors")
struct StandardProcessorsTests {
    @Test func standardRegistryOffersResizeCropAndBlurByName() {
        // Given the built-in registry
        let registry = ProcessorRegistry.standard

        // Then it lists the first three plugins, in order, under their step names
        #expect(registry.processors.map { $0.name }.prefix(3) == ["resize", "crop", "blur"])
        #expect(registry.processor(named: "resize") == Resize.self)
        #expect(registry.processor(named: "crop") == Crop.self)
        #expect(registry.processor(named: "blur") == Blur.self)
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
