extension OutputDefinition {
    /// The width and height every image from this output has, whatever its input, when its steps
    /// fix them (a resize to a width, a cover to a box, a region crop); nil for a side that
    /// depends on the input. `{width}` and `{height}` are filled in from these when planning, so
    /// that outputs sharing one template with different fixed sizes are told apart before the run.
    ///
    /// Steps say only what size they make from a given size, so a side counts as fixed when the
    /// steps make the same length from every one of a spread of sizes: tiny, huge, square, very
    /// wide and very tall. A step whose result depends on its input shows it on one of them; the
    /// runner's check of paths written in the run is there for whatever slips through. An
    /// animation's size is one frame's (`VipsImage.frameSize`), which its steps make as a still
    /// image's.
    func fixedSize() -> (width: Int?, height: Int?) {
        guard !steps.isEmpty else { return (nil, nil) }
        let probes = [(1, 1), (2, 3), (3, 2), (640, 480), (480, 640), (4099, 17), (17, 4099), (10007, 10009), (100_000, 1), (1, 100_000)]
        let sizes = probes.map { probe in
            steps.reduce(ImageSize(width: probe.0, height: probe.1)) { $1.outputSize(for: $0) }
        }
        let widths = Set(sizes.map(\.width))
        let heights = Set(sizes.map(\.height))
        return (widths.count == 1 ? widths.first : nil, heights.count == 1 ? heights.first : nil)
    }
}
