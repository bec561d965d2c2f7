import Vips

extension VipsImage {
    /// Runs `operation` on the colour bands only and puts the alpha band back untouched, for
    /// filters that must not change transparency (sharpening alpha would draw halos in it).
    func withAlphaSetAside(
        _ operation: (VipsImage) throws(VipsError) -> VipsImage
    ) throws(VipsError) -> VipsImage {
        guard hasAlpha else { return try operation(self) }
        let colour = try applying("extract_band", ["band": .integer(0), "n": .integer(bands - 1)])
        let alpha = try applying("extract_band", ["band": .integer(bands - 1)])
        let processed = try operation(colour)
        guard let joined = try Vips.call("bandjoin", ["in": .images([processed, alpha])])["out"]?.image else {
            throw VipsError(operation: "bandjoin", message: "bandjoin gave no output image")
        }
        return joined
    }
}
