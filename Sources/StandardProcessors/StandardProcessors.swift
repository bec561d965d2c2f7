public import PipelineKit
import VipsColour
import VipsComposite
import VipsCrop
import VipsFilters
import VipsGeometry
import VipsOperation
import VipsResize
import VipsText

#if Faces
import FaceDetection
#endif

extension ProcessorRegistry {
    /// The processors built into `pipeline`, in the order `pipeline plugins` lists them.
    ///
    /// A plugin from another package is added with `.standard.adding(MyStep.self)` and its own
    /// command (see docs/writing-a-plugin.md). A plugin built into this repository is a type under `Plugins/`
    /// that conforms to `ImageProcessing`, in a module that `Package.swift` lists in
    /// `pluginModules`, plus its line here (and its module's `import` above).
    public static let standard = ProcessorRegistry([
        Resize.self,
        Crop.self,
        Blur.self,
        Rotate.self,
        Flip.self,
        Flop.self,
        Extend.self,
        Trim.self,
        Sharpen.self,
        Median.self,
        Flatten.self,
        Greyscale.self,
        Grayscale.self,
        Modulate.self,
        Tint.self,
        Gamma.self,
        Normalise.self,
        Normalize.self,
        Negate.self,
        Composite.self,
        Text.self,
        VipsStep.self,
    ]).withStandardFaceFinder()

    /// The registry with OpenCV's face detector when the build has the Faces trait; as it is
    /// otherwise, so that `"position": "faces"` is refused when the file is checked.
    private func withStandardFaceFinder() -> ProcessorRegistry {
        #if Faces
        findingFaces(with: CascadeFaceFinder())
        #else
        self
        #endif
    }
}
