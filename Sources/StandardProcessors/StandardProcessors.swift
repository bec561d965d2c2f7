public import PipelineKit
import VipsBlur
import VipsCrop
import VipsResize

extension ProcessorRegistry {
    /// The processors built into `pipeline`, in the order `pipeline plugins` lists them.
    ///
    /// Adding a plugin is a folder under `Plugins/` with a type that conforms to
    /// `ImageProcessing`, a target for it in `Package.swift` (and in this target's
    /// dependencies), and one line here.
    public static let standard = ProcessorRegistry([
        Resize.self,
        Crop.self,
        Blur.self,
    ])
}
