import PipelineKit
import StandardProcessors
import Testing
import VipsFilters
import VipsCrop
import VipsResize

@Suite("StandardProcessors")
struct StandardProcessorsTests {
    @Test func standardRegistryOffersResizeCropAndBlurByName() {
        // Given the built-in registry
        let registry = ProcessorRegistry.standard

        // Then it lists the three plugins, in order, under their step names
        #expect(registry.processors.map { $0.name } == ["resize", "crop", "blur"])
        #expect(registry.processor(named: "resize") == Resize.self)
        #expect(registry.processor(named: "crop") == Crop.self)
        #expect(registry.processor(named: "blur") == Blur.self)
    }
}
