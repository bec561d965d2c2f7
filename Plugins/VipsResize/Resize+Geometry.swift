import PipelineKit

extension Resize {
    /// The arithmetic of one resize. `outputSize(for:)`, `allowedInputShrink(for:)` and `process`
    /// all read it, so the planner's idea of a result can never disagree with the result.
    struct Geometry: Equatable {
        /// The size after resampling.
        var scaled: ImageSize
        /// The size after cover's crop or contain's letterbox (`scaled` for the other modes).
        var output: ImageSize
        /// How many times smaller the input could be made before resampling (at least 1).
        var inputShrink: Double

        /// libvips refuses images with a side over 10,000,000 pixels (`VIPS_MAX_COORD`).
        var isWithinLibvipsLimits: Bool {
            let limit = 10_000_000
            return max(scaled.width, scaled.height, output.width, output.height) <= limit
        }
    }

    func geometry(for input: ImageSize) -> Geometry {
        // A real image has at least one pixel each way; guard the planner's arithmetic anyway.
        let source = ImageSize(width: max(1, input.width), height: max(1, input.height))
        switch (width, height) {
        case (let width?, let height?):
            return boxGeometry(source, box: ImageSize(width: width, height: height))
        case (let width?, nil):
            return uniform(source, target: .width(width))
        case (nil, let height?):
            return uniform(source, target: .height(height))
        case (nil, nil):
            // `init` rejects this; an unchanged image is the only sensible answer.
            return Geometry(scaled: source, output: source, inputShrink: 1)
        }
    }

    /// The geometry for the image as decoded, of `size`, of an input of `original` size: made
    /// smaller by the decoder for a wider output, its sides were rounded once already, so sizes
    /// are taken from the original's proportions, as a resize of the original makes them (960
    /// of 1600×1067 is 960×640, not the 641 that 1280×854 gives). A part decoded alone (a
    /// window), or an image the sizes would enlarge, is sized from itself.
    func geometry(for size: ImageSize, decodedFrom original: ImageSize) -> Geometry {
        guard size != original, size.width < original.width, size.height < original.height else { return geometry(for: size) }
        let scale = Double(size.width) / Double(original.width)
        guard abs(Double(size.height) - Double(original.height) * scale) < 1 else { return geometry(for: size) }
        let proportional = geometry(for: original)
        guard proportional.scaled.width <= size.width, proportional.scaled.height <= size.height else { return geometry(for: size) }
        return proportional
    }

    private func boxGeometry(_ source: ImageSize, box: ImageSize) -> Geometry {
        let horizontal = Double(box.width) / Double(source.width)
        let vertical = Double(box.height) / Double(source.height)
        switch fit {
        case .fill:
            var scaled = box
            if withoutEnlargement {
                scaled = ImageSize(width: min(box.width, source.width), height: min(box.height, source.height))
            }
            let shrink = min(Double(source.width) / Double(scaled.width), Double(source.height) / Double(scaled.height))
            return Geometry(scaled: scaled, output: scaled, inputShrink: max(1, shrink))
        case .inside, .contain:
            // The tighter side decides; the other side then rounds to at most its box side.
            var geometry = uniform(source, target: horizontal <= vertical ? .width(box.width) : .height(box.height))
            if fit == .contain {
                geometry.output = ImageSize(
                    width: max(box.width, geometry.scaled.width), height: max(box.height, geometry.scaled.height)
                )
            }
            return geometry
        case .cover, .outside:
            // The looser side decides; the other side then rounds to at least its box side.
            var geometry = uniform(source, target: horizontal >= vertical ? .width(box.width) : .height(box.height))
            if fit == .cover {
                // Without enlargement the scaled image may be smaller than the box: crop to at most it.
                geometry.output = ImageSize(
                    width: min(box.width, geometry.scaled.width), height: min(box.height, geometry.scaled.height)
                )
            }
            return geometry
        }
    }

    /// A side length as libvips computes it: rounded half up (VIPS_ROUND_UINT), at least 1.
    /// The upper clamp only keeps absurd planner inputs from trapping the conversion to `Int`.
    private static func side(_ length: Double) -> Int {
        Int(min(max(1, length.rounded()), 1e15))
    }

    private enum Target {
        case width(Int)
        case height(Int)
    }

    /// Scales both sides by one factor, chosen so that the target side comes out exact.
    private func uniform(_ source: ImageSize, target: Target) -> Geometry {
        let scale: Double =
            switch target {
            case .width(let width): Double(width) / Double(source.width)
            case .height(let height): Double(height) / Double(source.height)
            }
        if withoutEnlargement, scale > 1 {
            return Geometry(scaled: source, output: source, inputShrink: 1)
        }
        let scaled: ImageSize =
            switch target {
            case .width(let width): ImageSize(width: width, height: Self.side(Double(source.height) * scale))
            case .height(let height): ImageSize(width: Self.side(Double(source.width) * scale), height: height)
            }
        return Geometry(scaled: scaled, output: scaled, inputShrink: max(1, 1 / scale))
    }
}
