public import PipelineKit

/// A step would make an image larger than libvips allows (a side over 10,000,000 pixels) or
/// than the run allows (`decompress.maxPixels`); the item fails before libvips is asked.
public struct ImageTooLarge: Error, Sendable, Equatable, CustomStringConvertible {
    /// The step's name, for example `extend`.
    public let step: String
    /// The size of the image the step was given.
    public let input: ImageSize
    /// The size the step would have made.
    public let output: ImageSize
    /// The run's `decompress.maxPixels`.
    public let maxPixels: Int

    /// libvips' largest image side, `VIPS_MAX_COORD`.
    public static let maxSide = 10_000_000

    /// The message the item fails with, naming the step, both sizes and the limit.
    public var description: String {
        let limit = max(output.width, output.height) > Self.maxSide ? "libvips allows" : "decompress.maxPixels (\(maxPixels)) allows"
        return "\(step) would make the \(input) image \(output), larger than \(limit)"
    }
}

extension ImageProcessing {
    /// Fails when `output` is larger than libvips or the run allows.
    func checkLimits(_ output: ImageSize, input: ImageSize, maxPixels: Int) throws(ImageTooLarge) {
        // With both sides within maxSide, their product cannot overflow.
        guard max(output.width, output.height) <= ImageTooLarge.maxSide, output.pixelCount <= maxPixels else {
            throw ImageTooLarge(step: Self.name, input: input, output: output, maxPixels: maxPixels)
        }
    }
}

/// A colour as `#rrggbbaa`, for identifiers.
func hexColour(_ rgba: [Double]) -> String {
    "#"
        + rgba.map { component in
            let text = String(Int(component.rounded()), radix: 16)
            return text.count == 1 ? "0" + text : text
        }.joined()
}
